# Writes oclc_isa_version_1100.bc from ROCm 5.2's oclc_isa_version_1030.bc,
# whose one constant is the ISA version (10300 -> 11000). A STAND-IN: ROCm
# 5.2 ships no gfx11 device library, and its ocml/ockl were not built with
# gfx11 in mind; code compiled with it is untested on gfx11 hardware.
# cmake -DLLVM_DIS=... -DLLVM_AS=... -DINPUT=...1030.bc -DOUTPUT=...1100.bc -P make_gfx11_isa.cmake
execute_process(COMMAND ${LLVM_DIS} ${INPUT} -o - OUTPUT_VARIABLE ir RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${LLVM_DIS} ${INPUT} failed (${rc})")
endif()
string(REPLACE "constant i32 10300," "constant i32 11000," patched "${ir}")
if(patched STREQUAL ir)
  message(FATAL_ERROR "${INPUT} has no 'constant i32 10300': not ROCm's gfx1030 ISA version bitcode")
endif()
file(WRITE ${OUTPUT}.ll "${patched}")
execute_process(COMMAND ${LLVM_AS} ${OUTPUT}.ll -o ${OUTPUT} RESULT_VARIABLE rc)
file(REMOVE ${OUTPUT}.ll)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${LLVM_AS} failed (${rc})")
endif()
