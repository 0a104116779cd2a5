"""Writes docs/mindspore-api.md: which MindSpore APIs msrt has, which only in
part (and what is missing), which not at all (run by `make docs`).

The names checked are TARGETS below (the MindSpore APIs msrt aims at, kept as
data here) together with every name msrt's registries already declare: the
ops' declared forms (`msrt.ops._api.forms()`, from `_C.op_api()`), the keys
of the context tables (`ms.context.options()`) and the public names
(`__all__`) of the Python modules. Each name is looked up in msrt:

- absent: the module or attribute does not exist;
- partial, from a documented marker: a declared op form with parameters bound
  `p->!` (they must keep their default, NotImplementedError otherwise), a
  context key that no subsystem of this build acts on (validated and stored
  only), or an entry of PARTIAL below (Python callables that raise
  NotImplementedError for some arguments, with what is missing);
- exists otherwise.

A test regenerates the text and fails if the committed file is stale.
"""
import importlib
import sys

import msrt as ms
from msrt.ops import _api

# The MindSpore APIs msrt targets (MindSpore's module paths). Names msrt's
# registries declare are added to these at generation time.
TARGETS = {
    "mindspore": """
        set_context get_context set_auto_parallel_context get_auto_parallel_context reset_auto_parallel_context
        set_ps_context get_ps_context reset_ps_context set_offload_context get_offload_context
        GRAPH_MODE PYNATIVE_MODE ParallelMode STRICT LAX COMPATIBLE
        Tensor Parameter ParameterTuple set_seed get_seed jit jit_class ms_function mutable JitConfig get_jit_config
        grad value_and_grad vmap export load save_checkpoint load_checkpoint load_param_into_net parse_print
        Model Callback LossMonitor TimeMonitor ModelCheckpoint CheckpointConfig FixedLossScaleManager
        DynamicLossScaleManager set_algo_parameters get_algo_parameters
        Profiler dtype uint8 uint16 uint32 uint64 int8 int16 int32 int64 float16 float32 float64 bfloat16
        complex64 complex128 bool_
    """,
    "mindspore.Tensor": """
        from_numpy asnumpy astype shape dtype reshape transpose sum mean max min argmax abs clip
        masked_fill gather topk sort argsort cumsum cumprod tril triu norm expand_dims squeeze flatten
        assign_value __mod__ __floordiv__ __pow__
    """,
    "mindspore.nn": """
        Cell SequentialCell CellList CellDict Dense Flatten Identity Dropout ReLU ReLU6 GELU SiLU Mish PReLU
        LeakyReLU Sigmoid Tanh Softmax LogSoftmax Embedding LSTM GRU RNN LayerNorm GroupNorm BatchNorm1d BatchNorm2d
        BatchNorm3d Conv1d Conv2d Conv3d Conv1dTranspose Conv2dTranspose Conv3dTranspose MaxPool1d MaxPool2d
        MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveMaxPool1d
        AdaptiveMaxPool2d Upsample PixelShuffle PixelUnshuffle MultiheadAttention TransformerEncoderLayer
        TransformerEncoder TransformerDecoderLayer TransformerDecoder Transformer ParameterUpdate GraphCell
        BCELoss BCEWithLogitsLoss NLLLoss CrossEntropyLoss SmoothL1Loss HuberLoss KLDivLoss CosineEmbeddingLoss
        MarginRankingLoss MSELoss L1Loss SoftmaxCrossEntropyWithLogits
        SGD Momentum Adam AdamWeightDecay Lamb RMSProp Adagrad
        WithLossCell WithEvalCell TrainOneStepCell TrainOneStepWithLossScaleCell ForwardValueAndGrad
        DynamicLossScaleUpdateCell FixedLossScaleUpdateCell
        cosine_decay_lr piecewise_constant_lr exponential_decay_lr warmup_lr CosineDecayLR WarmUpLR
    """,
    "mindspore.nn.Cell": """
        construct set_train trainable_params get_parameters parameters_dict cells_and_names set_grad to_float
        set_jit_config set_inputs register_backward_hook register_forward_hook register_forward_pre_hook
        recompute
    """,
    "mindspore.ops": """
        interpolate pad topk sort argsort cumsum cumprod einsum randn rand randint normal uniform masked_fill
        where gather gather_elements scatter unique tril triu meshgrid stack split chunk clamp norm logsumexp
        one_hot matmul bmm stop_gradient grad value_and_grad vmap print_ HookBackward Print GradOperation
        Primitive prim_attr_register constexpr
    """,
    "mindspore.amp": """
        auto_mixed_precision build_train_network all_finite DynamicLossScaler StaticLossScaler
        DynamicLossScaleManager FixedLossScaleManager LossScaleManager
    """,
    "mindspore.train": """
        Model Callback RunContext LossMonitor TimeMonitor ModelCheckpoint CheckpointConfig BackupAndRestore
        SummaryCollector SummaryRecord EarlyStopping ReduceLROnPlateau LambdaCallback History
        FixedLossScaleManager DynamicLossScaleManager Accuracy Loss MAE MSE Precision Recall F1 Fbeta
        TopKCategoricalAccuracy ConfusionMatrix save_checkpoint load_checkpoint load_param_into_net
    """,
    "mindspore.train.serialization": "export load save_checkpoint load_checkpoint load_param_into_net",
    "mindspore.train.callback": """
        Callback LossMonitor TimeMonitor ModelCheckpoint CheckpointConfig BackupAndRestore SummaryCollector History
    """,
    "mindspore.common.api": "jit",
    "mindspore.ops.functional": "grad vmap",
    "mindspore.ops.primitive": "Primitive prim_attr_register constexpr",
    "mindspore.parallel": "set_algo_parameters get_algo_parameters reset_algo_parameters",
    "mindspore.dataset": """
        GeneratorDataset NumpySlicesDataset Cifar10Dataset Cifar100Dataset ImageFolderDataset MindDataset
        MnistDataset RandomSampler SequentialSampler DistributedSampler SubsetRandomSampler zip config
    """,
    "mindspore.dataset.Dataset": """
        batch map shuffle repeat take skip split zip concat project rename create_tuple_iterator
        create_dict_iterator get_dataset_size get_col_names
    """,
    "mindspore.dataset.vision": """
        Decode Resize RandomCrop RandomResizedCrop RandomHorizontalFlip RandomVerticalFlip Normalize HWC2CHW
        Rescale CenterCrop Inter Border
    """,
    "mindspore.dataset.transforms": "TypeCast OneHot Compose PadEnd Fill Slice Concatenate",
    "mindspore.dataset.text": "Lookup Vocab WhitespaceTokenizer ToNumber SlidingWindow",
    "mindspore.mindrecord": "FileWriter FileReader",
}

# Module paths MindSpore scripts import.
MODULES = """
    mindspore.common mindspore.common.api mindspore.common.tensor mindspore.common.parameter
    mindspore.common.initializer mindspore.common.dtype mindspore.ops.operations mindspore.ops.operations.nn_ops
    mindspore.ops.operations.math_ops mindspore.ops.operations.array_ops mindspore.ops.functional
    mindspore.ops.primitive mindspore.ops.composite mindspore.nn mindspore.nn.metrics mindspore.train
    mindspore.train.serialization mindspore.train.metrics mindspore.train.callback mindspore.amp
    mindspore.parallel mindspore.communication mindspore.dataset mindspore.dataset.vision
    mindspore.dataset.transforms mindspore.dataset.text mindspore.mindrecord mindspore.profiler
""".split()

# Context keys of MindSpore r2.3 that msrt targets (its tables' keys are added).
# op_debug_option is a key of ascend_config in r2.3 (a context key from r2.6).
CONTEXT_TARGETS = {"context": ["jit_config", "ascend_config"], "auto_parallel_context": ["pipeline_config"]}

# Python callables that exist but raise NotImplementedError for some
# arguments: what is missing. Keep in step with the code (a test checks each
# entry names an existing API).
PARTIAL = {
    "mindspore.nn.MaxPool2d": "pad_mode='pad', padding, ceil_mode, dilation, return_indices",
    "mindspore.nn.AvgPool2d": "pad_mode='pad', padding, ceil_mode, divisor_override",
    "mindspore.nn.MaxPool1d": "pad_mode='pad', padding, ceil_mode, dilation, return_indices",
    "mindspore.nn.AvgPool1d": "pad_mode='pad', padding, ceil_mode",
    "mindspore.nn.MaxPool3d": "dilation, return_indices",
    "mindspore.nn.AvgPool3d": "divisor_override",
    "mindspore.nn.AdaptiveMaxPool2d": "return_indices",
    "mindspore.nn.Upsample": "recompute_scale_factor",
    "mindspore.nn.MultiheadAttention": "add_bias_kv, add_zero_attn",
    "mindspore.nn.Adam": "use_amsgrad, use_lazy, use_offload",
    "mindspore.save_checkpoint": "format='safetensors', enc_key",
    "mindspore.load_checkpoint": "format='safetensors', dec_key",
    "mindspore.train.CheckpointConfig": "enc_key",
    "mindspore.dataset.GeneratorDataset": "schema",
    "mindspore.set_algo_parameters": "any effect: checked and stored, msrt searches no auto-parallel strategies",
    "mindspore.parallel.set_algo_parameters": "any effect: checked and stored, msrt searches no auto-parallel "
                                              "strategies",
    "mindspore.dataset.MindDataset": "padded_sample, num_padded, sharding with Shuffle.FILES / Shuffle.INFILE",
    "mindspore.dataset.ImageFolderDataset": "decode=True of formats other than JPEG and PNG",
    "mindspore.dataset.DistributedSampler": "offset other than -1",
    "mindspore.dataset.Dataset.map": "cache, callbacks",
    "mindspore.dataset.vision.Decode": "to_pil=True; formats other than JPEG and PNG (BMP, TIFF, GIF, WebP)",
    "mindspore.dataset.vision.Resize": "interpolation other than Inter.LINEAR / Inter.NEAREST",
    "mindspore.dataset.vision.RandomResizedCrop": "interpolation other than Inter.LINEAR / Inter.NEAREST",
    "mindspore.dataset.text.WhitespaceTokenizer": "ICU's whitespace set (splits on Python's str.isspace, which also "
                                                  "counts U+001C to U+001F)",
    "mindspore.train.SummaryCollector": "collect_specified_data's collect_graph, lineage, dataset graph and "
                                        "landscape; custom_lineage_data, export_options, num_process",
    "mindspore.train.callback.SummaryCollector": "collect_specified_data's collect_graph, lineage, dataset graph "
                                                 "and landscape; custom_lineage_data, export_options, num_process",
    "mindspore.train.SummaryRecord": "plugins 'graph', lineage, 'dataset_graph' and 'LossLandscape'; network, "
                                     "export_options, num_process, raise_exception",
}

# Public names of msrt's modules that are msrt's own, not MindSpore APIs.
MSRT_ONLY = {
    "MsrtWarning", "ContextDeprecationWarning", "DeviceNotApplicableWarning", "GraphCaptureError",
    "CifarFileNotFoundError", "CifarFormatError", "MnistFileNotFoundError", "MnistFormatError",
}

# Where each section's names are looked up in msrt: a module, or a class of one.
OWNERS = {
    "mindspore.Tensor": ("msrt", "Tensor"),
    "mindspore.nn.Cell": ("msrt.nn", "Cell"),
    "mindspore.dataset.Dataset": ("msrt.dataset", "Dataset"),
}


def msrt_path(path):
    return "msrt" + path[len("mindspore"):]


def import_module(path):
    try:
        return importlib.import_module(msrt_path(path))
    except ImportError:
        return None


def owner(section):
    if section in OWNERS:
        module, cls = OWNERS[section]
        return getattr(importlib.import_module(module), cls)
    return import_module(section)


def declared(section):
    """Names msrt's registries declare for a section."""
    names = set()
    if section == "mindspore.ops":
        names = {n for f in _api.forms() if f["kind"] in ("function", "primitive") for n in f["names"]}
    elif section == "mindspore.Tensor":
        names = {n for f in _api.forms("method") for n in f["names"]}
    elif section not in OWNERS:
        module = import_module(section)
        names = set(getattr(module, "__all__", ()) if module is not None else ())
        names = {n for n in names if not isinstance(getattr(module, n, None), type(sys))}
    return {n for n in names if not n.startswith("_") and n not in MSRT_ONLY}


def unsupported_params(section):
    """name -> the parameters its declared forms bind `p->!` (must keep their default)."""
    kinds = {"mindspore.ops": ("function", "primitive"), "mindspore.Tensor": ("method",)}.get(section)
    result = {}
    for form in _api.forms() if kinds else ():
        if form["kind"] not in kinds:
            continue
        params = [p["name"] for p in form["init"] + form["params"] if p["binds"] == "unsupported"]
        for name in form["names"] if params else ():
            result.setdefault(name, [])
            result[name] += [p for p in params if p not in result[name]]
    return result


def status_rows(section):
    where = owner(section)
    names = set(TARGETS.get(section, "").split()) | declared(section)
    unsupported = unsupported_params(section)
    rows = []
    for name in sorted(names, key=lambda n: (n.lower(), n)):
        full = f"{section}.{name}"
        if where is None or not hasattr(where, name):
            rows.append((name, "absent", ""))
        elif full in PARTIAL:
            rows.append((name, "partial", PARTIAL[full]))
        elif name in unsupported:
            rows.append((name, "partial", ", ".join(unsupported[name]) + " (must keep their defaults)"))
        else:
            rows.append((name, "exists", ""))
    return rows


def context_rows(family):
    options = {o["name"] for o in ms.context.options(family)}
    rows = []
    for name in sorted(options | set(CONTEXT_TARGETS.get(family, ()))):
        if name not in options:
            rows.append((name, "absent", ""))
        elif not ms.context.explain(name)["consumers"]:
            rows.append((name, "partial", "validated and stored; no subsystem of this build subscribes to it"))
        else:
            rows.append((name, "exists", ""))
    return rows


def table(rows, first="name"):
    out = [f"| {first} | status | missing |", "|---|---|---|"]
    out += [f"| `{name}` | {status} | {missing.replace('|', chr(92) + '|')} |" for name, status, missing in rows]
    return out


def counts(rows):
    return {s: sum(r[1] == s for r in rows) for s in ("exists", "partial", "absent")}


def render():
    ms.context.set_profile("r2.3")  # the same text whatever the caller's profile
    sections = [("Module paths", [(m, "exists" if import_module(m) is not None else "absent", "")
                                  for m in MODULES], "module")]
    families = []
    for option in ms.context.options():
        if option["family"] not in families:
            families.append(option["family"])
    for family in families:
        sections.append((f"Context keys: `{family}`", context_rows(family), "key"))
    for section in TARGETS:
        sections.append((f"`{section}`", status_rows(section), "name"))
    total = {"exists": 0, "partial": 0, "absent": 0}
    for _, rows, _ in sections:
        for k, v in counts(rows).items():
            total[k] += v
    out = [
        "# MindSpore API status",
        "",
        "Generated by `tools/gen_api_status.py`; do not edit by hand (`make docs`).",
        "",
        "Which MindSpore APIs msrt provides under `import msrt as ms`. The names are",
        "the ones msrt targets (a list kept in the script) and every name msrt's",
        "registries declare: the ops' declared forms, the context tables and the",
        "public names of the Python modules. A name is",
        "",
        "- **exists**: present, and no marker says an argument is unsupported;",
        "- **partial**: present, but what *missing* lists is not supported: the",
        "  arguments named there raise `NotImplementedError` when given (an op",
        "  form's parameters bound `p->!`, or an entry of the script's table of",
        "  Python callables, which also names missing behaviour), or, for a",
        "  context key, it is validated and stored but no subsystem of this build",
        "  subscribes to it (its *used by* column in docs/context.md is empty);",
        "- **absent**: no such module or attribute.",
        "",
        "The dataset sources and `map` take no `cache` (msrt has no cache server:",
        "NotImplementedError); the table does not repeat it for each.",
        "",
        "Present is not the same as tested against MindSpore in every detail: see the",
        "other pages of `docs/` for the behaviour of each area.",
        "",
        f"In all: {total['exists']} exist, {total['partial']} partial, {total['absent']} absent.",
        "",
    ]
    for title, rows, first in sections:
        c = counts(rows)
        out += [f"## {title}", "", f"{c['exists']} exist, {c['partial']} partial, {c['absent']} absent.", ""]
        out += table(rows, first) + [""]
    return "\n".join(out)


def main():
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
