// VHLO op names are the StableHLO names with a version suffix (`add_v1`),
// and VHLO keeps every attribute of an op (defaults written out) as one
// required property; the op table below lists each op's attributes as
// VhloOps.td declares them. Generated ODS code writes properties in the
// order of the attribute names sorted, so that is the order read here.
#include "hlo/vhlo_ops.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "hlo/bytecode_locations.h"
#include "hlo/vhlo_attributes.h"

namespace anvil::hlo::vhlo {
namespace {

using bytecode::GenericBlock;
using bytecode::GenericOp;
using bytecode::GenericRegion;
using bytecode::Reader;
using mlir::Attr;
using mlir::NamedAttr;

struct OpInfo {
  const char* name;
  const char* attributes;  // space-separated, as declared
};

// Every op of VHLO up to 1.20.0 with the attributes it declares.
constexpr OpInfo kOps[] = {
    {"abs_v1", ""},
    {"add_v1", ""},
    {"after_all_v1", ""},
    {"all_gather_v1", "all_gather_dim replica_groups channel_id use_global_device_ids"},
    {"all_gather_v2", "all_gather_dim replica_groups channel_id use_global_device_ids"},
    {"all_reduce_v1", "replica_groups channel_id use_global_device_ids"},
    {"all_reduce_v2", "replica_groups channel_id use_global_device_ids"},
    {"all_to_all_v1", "split_dimension concat_dimension split_count replica_groups channel_id"},
    {"all_to_all_v2", "split_dimension concat_dimension split_count replica_groups channel_id"},
    {"and_v1", ""},
    {"async_start_v1", ""},
    {"async_done_v1", ""},
    {"atan2_v1", ""},
    {"batch_norm_grad_v1", "epsilon feature_index"},
    {"batch_norm_inference_v1", "epsilon feature_index"},
    {"batch_norm_training_v1", "epsilon feature_index"},
    {"bitcast_convert_v1", ""},
    {"broadcast_in_dim_v1", "broadcast_dimensions"},
    {"broadcast_v1", "broadcast_sizes"},
    {"call_v1", "callee"},
    {"case_v1", ""},
    {"cbrt_v1", ""},
    {"cbrt_v2", "result_accuracy"},
    {"ceil_v1", ""},
    {"cholesky_v1", "lower"},
    {"clamp_v1", ""},
    {"count_leading_zeros_v1", ""},
    {"collective_broadcast_v1", "replica_groups channel_id"},
    {"collective_broadcast_v2", "replica_groups channel_id has_dynamic_root"},
    {"collective_reduce_v1", "replica_groups channel_id use_global_device_ids has_dynamic_root"},
    {"collective_permute_v1", "source_target_pairs channel_id"},
    {"compare_v1", "comparison_direction compare_type"},
    {"complex_v1", ""},
    {"composite_v1", "name composite_attributes decomposition version"},
    {"composite_v2", "name composite_attributes decomposition version"},
    {"concatenate_v1", "dimension"},
    {"constant_v1", "value"},
    {"convert_v1", ""},
    {"convolution_v1",
     "window_strides padding lhs_dilation rhs_dilation window_reversal "
     "input_batch_dimension input_feature_dimension input_spatial_dimensions "
     "kernel_input_feature_dimension kernel_output_feature_dimension "
     "kernel_spatial_dimensions output_batch_dimension output_feature_dimension "
     "output_spatial_dimensions feature_group_count batch_group_count precision_config"},
    {"cosine_v1", ""},
    {"cosine_v2", "result_accuracy"},
    {"create_token_v1", ""},
    {"cross-replica-sum_v1", "replica_groups"},
    {"custom_call_v1",
     "call_target_name has_side_effect backend_config api_version called_computations "
     "operand_layouts result_layouts output_operand_aliases"},
    {"custom_call_v2",
     "call_target_name has_side_effect backend_config api_version called_computations "
     "operand_layouts result_layouts output_operand_aliases result_tilings"},
    {"divide_v1", ""},
    {"dot_general_v1",
     "lhs_batching_dimensions rhs_batching_dimensions lhs_contracting_dimensions "
     "rhs_contracting_dimensions precision_config"},
    {"dot_general_v2",
     "lhs_batching_dimensions rhs_batching_dimensions lhs_contracting_dimensions "
     "rhs_contracting_dimensions precision_config lhs_precision_type rhs_precision_type "
     "accumulation_type lhs_component_count rhs_component_count num_primitive_operations "
     "allow_imprecise_accumulation"},
    {"dot_v1", "precision_config"},
    {"dynamic_broadcast_in_dim_v1", "broadcast_dimensions known_expanding_dimensions known_nonexpanding_dimensions"},
    {"dynamic_conv_v1",
     "window_strides padding lhs_dilation rhs_dilation window_reversal "
     "input_batch_dimension input_feature_dimension input_spatial_dimensions "
     "kernel_input_feature_dimension kernel_output_feature_dimension "
     "kernel_spatial_dimensions output_batch_dimension output_feature_dimension "
     "output_spatial_dimensions feature_group_count batch_group_count precision_config"},
    {"dynamic_conv_v2",
     "window_strides lhs_dilation rhs_dilation window_reversal input_batch_dimension "
     "input_feature_dimension input_spatial_dimensions kernel_input_feature_dimension "
     "kernel_output_feature_dimension kernel_spatial_dimensions output_batch_dimension "
     "output_feature_dimension output_spatial_dimensions feature_group_count "
     "batch_group_count precision_config"},
    {"dynamic_gather_v1", "offset_dims collapsed_slice_dims start_index_map index_vector_dim indices_are_sorted"},
    {"dynamic_gather_v2",
     "offset_dims collapsed_slice_dims operand_batching_dims start_indices_batching_dims "
     "start_index_map index_vector_dim indices_are_sorted"},
    {"dynamic_iota_v1", "iota_dimension"},
    {"dynamic_pad_v1", ""},
    {"dynamic_reshape_v1", ""},
    {"dynamic_slice_v1", "slice_sizes"},
    {"dynamic_update_slice_v1", ""},
    {"einsum_v1", "einsum_config"},
    {"exponential_minus_one_v1", ""},
    {"exponential_minus_one_v2", "result_accuracy"},
    {"exponential_v1", ""},
    {"exponential_v2", "result_accuracy"},
    {"fft_v1", "fft_type fft_length"},
    {"floor_v1", ""},
    {"func_v1", "sym_name function_type sym_visibility arg_attrs res_attrs"},
    {"gather_v1", "offset_dims collapsed_slice_dims start_index_map index_vector_dim slice_sizes indices_are_sorted"},
    {"gather_v2",
     "offset_dims collapsed_slice_dims operand_batching_dims start_indices_batching_dims "
     "start_index_map index_vector_dim slice_sizes indices_are_sorted"},
    {"get_dimension_size_v1", "dimension"},
    {"get_tuple_element_v1", "index"},
    {"if_v1", ""},
    {"imag_v1", ""},
    {"infeed_v1", "infeed_config layout"},
    {"iota_v1", "iota_dimension"},
    {"is_finite_v1", ""},
    {"log_plus_one_v1", ""},
    {"log_plus_one_v2", "result_accuracy"},
    {"logistic_v1", ""},
    {"logistic_v2", "result_accuracy"},
    {"log_v1", ""},
    {"log_v2", "result_accuracy"},
    {"map_v1", "dimensions"},
    {"maximum_v1", ""},
    {"minimum_v1", ""},
    {"multiply_v1", ""},
    {"negate_v1", ""},
    {"not_v1", ""},
    {"optimization_barrier_v1", ""},
    {"or_v1", ""},
    {"outfeed_v1", "outfeed_config"},
    {"pad_v1", "edge_padding_low edge_padding_high interior_padding"},
    {"partition_id_v1", ""},
    {"popcnt_v1", ""},
    {"power_v1", ""},
    {"real_dynamic_slice_v1", ""},
    {"real_v1", ""},
    {"recv_v1", "channel_id channel_type is_host_transfer"},
    {"recv_v2", "channel_id channel_type is_host_transfer source_target_pairs"},
    {"reduce_v1", "dimensions"},
    {"reduce_precision_v1", "exponent_bits mantissa_bits"},
    {"reduce_scatter_v1", "scatter_dimension replica_groups channel_id use_global_device_ids"},
    {"reduce_window_v1", "window_dimensions window_strides base_dilations window_dilations padding"},
    {"remainder_v1", ""},
    {"replica_id_v1", ""},
    {"reshape_v1", ""},
    {"return_v1", ""},
    {"reverse_v1", "dimensions"},
    {"rng_bit_generator_v1", "rng_algorithm"},
    {"rng_v1", "rng_distribution"},
    {"round_nearest_even_v1", ""},
    {"round_nearest_afz_v1", ""},
    {"rsqrt_v1", ""},
    {"rsqrt_v2", "result_accuracy"},
    {"scatter_v1",
     "update_window_dims inserted_window_dims scatter_dims_to_operand_dims "
     "index_vector_dim indices_are_sorted unique_indices"},
    {"scatter_v2",
     "update_window_dims inserted_window_dims input_batching_dims "
     "scatter_indices_batching_dims scatter_dims_to_operand_dims index_vector_dim "
     "indices_are_sorted unique_indices"},
    {"select_and_scatter_v1", "window_dimensions window_strides padding"},
    {"select_v1", ""},
    {"send_v1", "channel_id channel_type is_host_transfer"},
    {"send_v2", "channel_id channel_type is_host_transfer source_target_pairs"},
    {"set_dimension_size_v1", "dimension"},
    {"shift_left_v1", ""},
    {"shift_right_arithmetic_v1", ""},
    {"shift_right_logical_v1", ""},
    {"sign_v1", ""},
    {"sine_v1", ""},
    {"sine_v2", "result_accuracy"},
    {"slice_v1", "start_indices limit_indices strides"},
    {"sort_v1", "dimension is_stable"},
    {"sqrt_v1", ""},
    {"sqrt_v2", "result_accuracy"},
    {"subtract_v1", ""},
    {"tan_v1", ""},
    {"tan_v2", "result_accuracy"},
    {"tanh_v1", ""},
    {"tanh_v2", "result_accuracy"},
    {"torch_index_select_v1", "dim batch_dims"},
    {"transpose_v1", "permutation"},
    {"triangular_solve_v1", "left_side lower unit_diagonal transpose_a"},
    {"tuple_v1", ""},
    {"unary_einsum_v1", "einsum_config"},
    {"uniform_dequantize_v1", ""},
    {"uniform_quantize_v1", ""},
    {"while_v1", ""},
    {"xor_v1", ""},
};

const std::map<std::string_view, std::vector<std::string>>& OpTable() {
  static const auto* table = [] {
    auto* t = new std::map<std::string_view, std::vector<std::string>>();
    for (const OpInfo& op : kOps) {
      std::vector<std::string> names;
      std::string_view rest = op.attributes;
      while (!rest.empty()) {
        size_t space = rest.find(' ');
        names.emplace_back(rest.substr(0, space));
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      }
      std::sort(names.begin(), names.end());
      (*t)[op.name] = std::move(names);
    }
    return t;
  }();
  return *table;
}

// `add_v1` -> `add`: the StableHLO name of a VHLO op.
std::string BaseName(std::string_view vhlo_name) {
  size_t v = vhlo_name.rfind("_v");
  return std::string(v == std::string_view::npos ? vhlo_name : vhlo_name.substr(0, v));
}

// Moves `keys` out of the op's attributes into one `#stablehlo.<kind><k = v, ...>`
// attribute named `into`: VHLO flattens the dimension-number structs that
// the StableHLO text (and so the lowering) groups.
void Regroup(mlir::Op& op, const char* into, const char* kind, std::initializer_list<const char*> keys) {
  Attr group;
  group.kind = Attr::Kind::kOpaque;
  group.s = kind;
  for (const char* key : keys) {
    auto it = std::find_if(op.attributes.begin(), op.attributes.end(),
                           [&](const NamedAttr& a) { return a.first == key; });
    if (it == op.attributes.end()) continue;
    if (!group.raw.empty()) group.raw += ", ";
    group.raw += std::string(key) + " = ...";
    group.entries.push_back(std::move(*it));
    op.attributes.erase(it);
  }
  op.attributes.push_back(NamedAttr{into, std::move(group)});
}

NamedAttr* FindNamed(mlir::Op& op, std::string_view key) {
  for (NamedAttr& a : op.attributes) {
    if (a.first == key) return &a;
  }
  return nullptr;
}

void Erase(mlir::Op& op, std::string_view key) {
  op.attributes.erase(std::remove_if(op.attributes.begin(), op.attributes.end(),
                                     [&](const NamedAttr& a) { return a.first == key; }),
                      op.attributes.end());
}

void StringToSymbol(Attr& a) {
  if (a.kind == Attr::Kind::kString) a.kind = Attr::Kind::kSymbol;
  for (Attr& e : a.list) StringToSymbol(e);
}

// Spells the op's attributes the way the StableHLO text does.
void Respell(mlir::Op& op, const std::string& base) {
  if (base == "dot_general") {
    Regroup(op, "dot_dimension_numbers", "stablehlo.dot",
            {"lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
             "rhs_contracting_dimensions"});
  } else if (base == "convolution" || base == "dynamic_conv") {
    Regroup(op, "dimension_numbers", "stablehlo.conv",
            {"input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
             "kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions",
             "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions"});
  } else if (base == "gather" || base == "dynamic_gather") {
    Regroup(op, "dimension_numbers", "stablehlo.gather",
            {"offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
             "start_index_map", "index_vector_dim"});
  } else if (base == "scatter") {
    Regroup(op, "scatter_dimension_numbers", "stablehlo.scatter",
            {"update_window_dims", "inserted_window_dims", "input_batching_dims", "scatter_indices_batching_dims",
             "scatter_dims_to_operand_dims", "index_vector_dim"});
  } else if (base == "call" || base == "composite") {
    if (NamedAttr* callee = FindNamed(op, base == "call" ? "callee" : "decomposition")) StringToSymbol(callee->second);
  } else if (base == "custom_call") {
    if (NamedAttr* callees = FindNamed(op, "called_computations")) StringToSymbol(callees->second);
    // Defaults VHLO writes out that the text leaves unsaid.
    if (NamedAttr* config = FindNamed(op, "backend_config")) {
      const Attr& c = config->second;
      if ((c.kind == Attr::Kind::kString && c.s.empty()) || (c.kind == Attr::Kind::kDict && c.entries.empty())) {
        Erase(op, "backend_config");
      }
    }
  }
  // Channels: VHLO's flat id (0 for none) and type.
  if (NamedAttr* id = FindNamed(op, "channel_id")) {
    Attr handle;
    handle.kind = Attr::Kind::kOpaque;
    handle.s = "stablehlo.channel_handle";
    const bool present = id->second.kind == Attr::Kind::kInt && id->second.i != 0;
    handle.entries.push_back(NamedAttr{"handle", id->second});
    handle.raw = "handle = ...";
    if (NamedAttr* type = FindNamed(op, "channel_type")) handle.entries.push_back(NamedAttr{"type", type->second});
    Erase(op, "channel_id");
    Erase(op, "channel_type");
    if (present) op.attributes.push_back(NamedAttr{"channel_handle", std::move(handle)});
  }
}

class Converter {
 public:
  Converter(const bytecode::File& f, const std::string* name) : f_(f), name_(name), decoder_(f, name) {}

  StatusOr<mlir::ModuleSyntax> Run() {
    ANVIL_RETURN_IF_ERROR(CheckProducer());
    mlir::ModuleSyntax module;
    for (const GenericOp& op : f_.top.ops) {
      const std::string full = FullName(op);
      if (full == "builtin.module") {
        module.name = ModuleName(op);
        for (const GenericRegion& region : op.regions) {
          for (const GenericBlock& block : region.blocks) {
            for (const GenericOp& inner : block.ops) ANVIL_RETURN_IF_ERROR(TopLevel(inner, module));
          }
        }
        continue;
      }
      ANVIL_RETURN_IF_ERROR(TopLevel(op, module));
    }
    if (module.functions.empty()) return ErrorAt(0, "the artifact defines no function");
    return module;
  }

 private:
  // The producer names the VHLO version (`StableHLO_v1.13.0`): a newer one
  // may hold ops whose meaning this reader cannot know.
  Status CheckProducer() {
    int major = 0, minor = 0, patch = 0;
    std::string producer(f_.producer);
    if (sscanf(producer.c_str(), "StableHLO_v%d.%d.%d", &major, &minor, &patch) != 3) return OkStatus();
    if (major > kNewestMajor || (major == kNewestMajor && minor > kNewestMinor)) {
      return ErrorAt(
          5, "the artifact was written by " + producer + ": VHLO " + std::to_string(major) + "." +
                 std::to_string(minor) + "." + std::to_string(patch) + " is newer than the newest this reader knows (" +
                 std::to_string(kNewestMajor) + "." + std::to_string(kNewestMinor) + ")");
    }
    return OkStatus();
  }

  // `module @jit_f`: the optional sym_name, the first of builtin.module's
  // optional properties (or an entry of its attributes before properties).
  // A module without a readable name is just unnamed.
  std::string ModuleName(const GenericOp& op) {
    std::optional<uint64_t> index;
    if (op.properties) {
      Reader r(f_.properties[*op.properties], name_);
      uint64_t value = 0;
      bool present = false;
      if (r.ReadVarIntWithFlag(value, present).ok() && present) index = value;
    } else if (op.attributes) {
      auto entries = decoder_.DictionaryIndices(*op.attributes);
      if (entries.ok()) {
        for (const auto& [key, value] : *entries) {
          if (key == "sym_name") index = value;
        }
      }
    }
    if (!index || *index >= f_.attributes.size()) return "";
    auto name = decoder_.Attribute(*index);
    if (!name.ok() || (*name)->kind != Attr::Kind::kString) return "";
    // The text parser reads a module name as an identifier; so must this be.
    for (char ch : (*name)->s) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '-') return "";
    }
    return (*name)->s;
  }

  Status ErrorAt(size_t offset, std::string_view message) const {
    return Reader({}, name_).ErrorAtOffset(offset, message);
  }

  std::string FullName(const GenericOp& op) const {
    const bytecode::OpNameEntry& n = f_.op_names[op.name];
    return std::string(f_.dialects[n.dialect].name) + "." + std::string(n.name);
  }

  Status Refuse(Status& refusal, size_t offset, std::string_view message) {
    if (refusal.ok()) refusal = ErrorAt(offset, message);
    return OkStatus();
  }

  // The attribute indices of an op's properties, by attribute name.
  Status PropertyIndices(const GenericOp& op, const std::vector<std::string>& names,
                         std::vector<std::pair<std::string, uint64_t>>& out) {
    if (!op.properties) {
      // Before properties (bytecode version 5), or an op unregistered when
      // written: the attributes are in a dictionary.
      for (std::optional<uint64_t> dict : {op.properties_attr, op.attributes}) {
        if (!dict) continue;
        ANVIL_ASSIGN_OR_RETURN(auto entries, decoder_.DictionaryIndices(*dict));
        for (auto& e : entries) out.push_back(std::move(e));
      }
      return OkStatus();
    }
    Reader r(f_.properties[*op.properties], name_);
    for (const std::string& key : names) {
      uint64_t index = 0;
      ANVIL_RETURN_IF_ERROR(r.ReadVarInt(index, "the attribute index of '" + key + "'"));
      if (index >= f_.attributes.size()) return r.Error("attribute index " + std::to_string(index) + " out of range");
      out.emplace_back(key, index);
    }
    if (!r.AtEnd()) return r.Error("unexpected bytes after the properties of " + FullName(op));
    return OkStatus();
  }

  // Refuses the function if `a` holds data of a type Anvil does not run.
  Status CheckSupported(const Attr& a, size_t offset, Status& refusal) {
    if (a.kind == Attr::Kind::kOpaque && a.s == kUnsupportedAttribute) return Refuse(refusal, offset, a.raw);
    for (const Attr& e : a.list) ANVIL_RETURN_IF_ERROR(CheckSupported(e, offset, refusal));
    for (const NamedAttr& e : a.entries) ANVIL_RETURN_IF_ERROR(CheckSupported(e.second, offset, refusal));
    return OkStatus();
  }

  Status Attributes(const GenericOp& op, const std::vector<std::string>& names, std::vector<NamedAttr>& out,
                    Status& refusal) {
    std::vector<std::pair<std::string, uint64_t>> indices;
    ANVIL_RETURN_IF_ERROR(PropertyIndices(op, names, indices));
    for (const auto& [key, index] : indices) {
      ANVIL_ASSIGN_OR_RETURN(const Attr* a, decoder_.Attribute(index));
      ANVIL_RETURN_IF_ERROR(CheckSupported(*a, op.offset, refusal));
      out.push_back(NamedAttr{key, *a});
    }
    for (std::optional<uint64_t> dict : {op.properties_attr, op.attributes}) {
      if (!dict || !op.properties) continue;  // else read above
      ANVIL_ASSIGN_OR_RETURN(const Attr* a, decoder_.Attribute(*dict));
      if (a->kind != Attr::Kind::kDict) {
        return ErrorAt(op.offset, "expected a dictionary of attributes");
      }
      ANVIL_RETURN_IF_ERROR(CheckSupported(*a, op.offset, refusal));
      for (const NamedAttr& e : a->entries) out.push_back(e);
    }
    return OkStatus();
  }

  StatusOr<Shape> ValueType(uint64_t index, size_t offset, Status& refusal) {
    ANVIL_ASSIGN_OR_RETURN(const Type* t, decoder_.TypeAt(index));
    StatusOr<Shape> shape = Decoder::ValueShape(*t);
    if (shape.ok()) return shape;
    ANVIL_RETURN_IF_ERROR(Refuse(refusal, offset, shape.status().message()));
    return Shape();
  }

  Status TopLevel(const GenericOp& op, mlir::ModuleSyntax& module) {
    // Other ops beside the functions (a sharding mesh, say) carry nothing
    // the functions need.
    if (FullName(op) != "vhlo.func_v1") return OkStatus();
    mlir::Function f;
    f.pos = op.offset;
    std::vector<std::pair<std::string, uint64_t>> props;
    ANVIL_RETURN_IF_ERROR(PropertyIndices(op, OpTable().at("func_v1"), props));
    Status refusal;
    for (const auto& [key, index] : props) {
      if (key == "sym_name" || key == "sym_visibility") {
        ANVIL_ASSIGN_OR_RETURN(const Attr* a, decoder_.Attribute(index));
        if (a->kind != Attr::Kind::kString) return ErrorAt(op.offset, key + " must be a string");
        if (key == "sym_name") f.name = a->s;
        if (key == "sym_visibility") f.is_public = a->s != "private";
      } else if (key == "arg_attrs") {
        // An array with one dictionary per argument.
        ANVIL_ASSIGN_OR_RETURN(const Attr* a, decoder_.Attribute(index));
        if (a->kind != Attr::Kind::kArray) return ErrorAt(op.offset, "arg_attrs must be an array");
        for (const Attr& dictionary : a->list) f.argument_attributes.push_back(dictionary.entries);
      } else if (key == "function_type") {
        ANVIL_ASSIGN_OR_RETURN(const Type* type, decoder_.TypeOfAttribute(index));
        if (type->kind != Type::Kind::kFunction) {
          return ErrorAt(op.offset, "function_type must be a function type");
        }
        for (const Type* r : type->results) {
          StatusOr<Shape> s = Decoder::ValueShape(*r);
          if (!s.ok()) ANVIL_RETURN_IF_ERROR(Refuse(refusal, op.offset, s.status().message()));
          f.result_types.push_back(s.ok() ? *s : Shape());
        }
      }
    }
    if (f.name.empty()) return ErrorAt(op.offset, "a function without a name");
    for (const mlir::Function& other : module.functions) {
      if (other.name == f.name) return ErrorAt(op.offset, "function @" + f.name + " is defined twice");
    }
    if (op.regions.size() != 1) return ErrorAt(op.offset, "a function needs one body region");
    ANVIL_RETURN_IF_ERROR(ConvertRegion(op.regions[0], f.body, refusal));
    if (!f.body.blocks.empty()) f.arguments = f.body.blocks.front().arguments;
    f.error = refusal;
    module.functions.push_back(std::move(f));
    return OkStatus();
  }

  Status ConvertRegion(const GenericRegion& in, mlir::Region& out, Status& refusal) {
    out.pos = in.offset;
    if (in.blocks.size() > 1) {
      ANVIL_RETURN_IF_ERROR(Refuse(refusal, in.offset, "regions of several blocks are not supported"));
    }
    for (const GenericBlock& block : in.blocks) {
      mlir::Block b;
      for (const auto& [name, type] : block.arguments) {
        ANVIL_ASSIGN_OR_RETURN(Shape shape, ValueType(type, in.offset, refusal));
        b.arguments.emplace_back(name, std::move(shape));
      }
      for (const GenericOp& op : block.ops) {
        auto converted = std::make_unique<mlir::Op>();
        ANVIL_RETURN_IF_ERROR(ConvertOp(op, *converted, refusal));
        b.ops.push_back(std::move(converted));
      }
      out.blocks.push_back(std::move(b));
    }
    return OkStatus();
  }

  static bool IsPassThrough(const std::string& name) {
    return name == "builtin.unrealized_conversion_cast" || name == "sdy.sharding_constraint" ||
           name == "sdy.reshard" || name == "sdy.propagation_barrier";
  }

  Status ConvertOp(const GenericOp& in, mlir::Op& out, Status& refusal) {
    out.pos = in.offset;
    const bytecode::SourceLocation where = bytecode::DescribeLocation(f_, in.location);
    out.source_file = where.file;
    out.source_line = where.line;
    out.source_name = where.name;
    out.location = where.ToString();
    const bytecode::OpNameEntry& n = f_.op_names[in.name];
    const std::string full = FullName(in);
    const auto& table = OpTable();
    auto info = table.find(n.name);
    if (IsPassThrough(full) && in.operands.size() == 1 && in.result_types.size() == 1) {
      // JAX leaves casts around typed PRNG keys (uint32 data to key and
      // back: a pair cancels out), and Shardy's annotations say how a value
      // is laid out across devices, which on one device changes nothing.
      // The lowering passes the value through with the operand's type, so
      // a key type itself need not be read.
      out.name = "builtin.unrealized_conversion_cast";
      out.results = in.results;
      out.operands.push_back(mlir::Value{in.operands[0], in.offset});
      return OkStatus();
    }
    if (f_.dialects[n.dialect].name != "vhlo" || info == table.end() || n.name == "func_v1") {
      ANVIL_RETURN_IF_ERROR(Refuse(refusal, in.offset, "unknown operation '" + full + "'"));
      out.name = full;
    } else {
      const std::string base = BaseName(n.name);
      out.name = base == "return" ? "stablehlo.return" : base == "call" ? "func.call" : "stablehlo." + base;
      ANVIL_RETURN_IF_ERROR(Attributes(in, info->second, out.attributes, refusal));
      Respell(out, base);
    }
    if (in.has_successors) ANVIL_RETURN_IF_ERROR(Refuse(refusal, in.offset, "successors (branches) are not supported"));
    out.results = in.results;
    for (uint64_t type : in.result_types) {
      ANVIL_ASSIGN_OR_RETURN(Shape shape, ValueType(type, in.offset, refusal));
      out.result_types.push_back(std::move(shape));
    }
    for (const std::string& operand : in.operands) out.operands.push_back(mlir::Value{operand, in.offset});
    for (const GenericRegion& region : in.regions) {
      out.regions.emplace_back();
      ANVIL_RETURN_IF_ERROR(ConvertRegion(region, out.regions.back(), refusal));
    }
    return OkStatus();
  }

  const bytecode::File& f_;
  const std::string* name_;
  Decoder decoder_;
};

}  // namespace

StatusOr<mlir::ModuleSyntax> ReadModule(const bytecode::File& file, const std::string* name) {
  Converter converter(file, name);
  return converter.Run();
}

}  // namespace anvil::hlo::vhlo
