"""MultiheadAttention, the Transformer encoder and decoder layers and stacks, and Transformer, as
MindSpore 2.3 has them (PyTorch's semantics). The attention is one multi_head_attention op (Note
[multi_head_attention] in src/ops/nn_layers.cc); the layers are compositions of cells."""
import copy

from ...common import dtype as mstype
from ...common.initializer import XavierUniform, initializer
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell
from .activation import GELU, ReLU
from .basic import Dense, Dropout
from .container import CellList
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]


def _positive_int(value, arg, cls_name):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"For '{cls_name}', the argument '{arg}' must be positive, but got {value}.")
    return value


def _probability(value, cls_name):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument 'dropout' must be float, but got {type(value).__name__}.")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"For '{cls_name}', the 'dropout' must be a number in range [0, 1), but got {value}.")
    return float(value)


def _activation(activation, cls_name):
    """The feed-forward activation: "relu", "gelu" (the erf form, as MindSpore's and PyTorch's), or a
    Cell or function applied as given."""
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise ValueError(f"For '{cls_name}', the 'activation' must be 'relu', 'gelu', a Cell or a function, "
                             f"but got {activation!r}.")
        return ReLU() if activation == "relu" else GELU(approximate=False)
    if not callable(activation):
        raise ValueError(f"For '{cls_name}', the 'activation' must be str, a Cell or a function, "
                         f"but got {type(activation).__name__}.")
    return activation


def _check_bool(value, arg, cls_name):
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be bool, but got {type(value).__name__}.")


def _check_padding_mask(mask, arg):
    """MindSpore's check on the encoders' key padding mask: bool or floating point."""
    if mask is not None and mask.dtype not in (mstype.bool_, mstype.bfloat16) + mstype.float_type:
        raise AssertionError(f"only bool and floating types of key_padding_mask are supported, "
                             f"but '{arg}' has dtype {mask.dtype}")


class _LayerConfig:
    """The constructor arguments a layer keeps as attributes (MindSpore's names)."""

    def _keep_config(self, d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first, norm_first, dtype):
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.dropout_num, self.layernorm_eps, self.batch_first = dropout, layer_norm_eps, batch_first
        self.norm_first, self.dtype = norm_first, dtype


class _TransformerLayer(_LayerConfig, Cell):
    """What the encoder and decoder layers share: the argument checks and the cells of `blocks` residual blocks
    (self-attention, with cross_attention an attention to the memory, and the feed-forward block; each with
    its LayerNorm and Dropout, in MindSpore's names and order), and the self-attention block."""

    def _build(self, blocks, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
               norm_first, dtype):
        name = self.cls_name
        _positive_int(dim_feedforward, "dim_feedforward", name)
        _check_bool(norm_first, "norm_first", name)
        p = _probability(dropout, name)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=p, batch_first=batch_first, dtype=dtype)
        if blocks == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=p, batch_first=batch_first, dtype=dtype)
        self.linear1 = Dense(d_model, dim_feedforward, dtype=dtype)
        self.dropout = Dropout(p=p)
        self.linear2 = Dense(dim_feedforward, d_model, dtype=dtype)
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(p=p))
        self.activation1 = activation
        self.activation = _activation(activation, name)
        self._keep_config(d_model, nhead, dim_feedforward, p, layer_norm_eps, batch_first, norm_first, dtype)

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False, attn_mask=attn_mask)[0]
        return self.dropout1(x)


class _TransformerStack(Cell):
    """`num_layers` deep copies of a layer (in layers "0", "1", ...) and an optional final norm, checked in the
    words of the stack `name` taking a `layer_class` as its argument `arg`."""

    def _build(self, name, arg, layer_class, layer, num_layers, norm):
        if not isinstance(layer, layer_class):
            raise TypeError(f"For '{name}', the '{arg}' must be a {layer_class.__name__}, "
                            f"but got {type(layer).__name__}.")
        _positive_int(num_layers, "num_layers", name)
        if norm is not None and not isinstance(norm, Cell):
            raise TypeError(f"For '{name}', the 'norm' must be a Cell or None, "
                            f"but got {type(norm).__name__}.")
        self.layers = CellList([copy.deepcopy(layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def _final_norm(self, output):
        return output if self.norm is None else self.norm(output)


class MultiheadAttention(Cell):
    """Multi-head attention: in_proj_weight (3 * embed_dim, embed_dim) XavierUniform (or q/k/v_proj_weight
    when kdim or vdim differ from embed_dim), in_proj_bias zeros, out_proj a Dense with a zero bias.
    construct(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True) returns (attn_output, attn_output_weights or None)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        _positive_int(embed_dim, "embed_dim", name)
        _positive_int(num_heads, "num_heads", name)
        if embed_dim % num_heads != 0:
            raise ValueError(f"For '{name}', the 'embed_dim' must be divisible by 'num_heads', "
                             f"but got embed_dim {embed_dim} and num_heads {num_heads}.")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(f"For '{name}', 'add_bias_kv' and 'add_zero_attn' are not supported by msrt yet.")
        for arg, value in (("has_bias", has_bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be bool, but got {type(value).__name__}.")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = embed_dim if kdim is None else _positive_int(kdim, "kdim", name)
        self.vdim = embed_dim if vdim is None else _positive_int(vdim, "vdim", name)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout = _probability(dropout, name)
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(initializer(XavierUniform(), [3 * embed_dim, embed_dim], dtype),
                                            name="in_proj_weight")
        else:
            self.q_proj_weight = Parameter(initializer(XavierUniform(), [embed_dim, embed_dim], dtype),
                                           name="q_proj_weight")
            self.k_proj_weight = Parameter(initializer(XavierUniform(), [embed_dim, self.kdim], dtype),
                                           name="k_proj_weight")
            self.v_proj_weight = Parameter(initializer(XavierUniform(), [embed_dim, self.vdim], dtype),
                                           name="v_proj_weight")
        self.in_proj_bias = Parameter(initializer("zeros", [3 * embed_dim], dtype), name="in_proj_bias") \
            if has_bias else None
        self.out_proj = Dense(embed_dim, embed_dim, bias_init="zeros", has_bias=has_bias, dtype=dtype)

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                  average_attn_weights=True):
        # unbatched inputs, (L, E) and (S, E), run as a batch of one
        unbatched = len(query.shape) == 2
        if unbatched:
            query, key, value = (_op("expand_dims", t, axis=1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = _op("expand_dims", key_padding_mask, axis=0)
        elif self.batch_first:
            query, key, value = (_op("transpose", t, perm=[1, 0, 2]) for t in (query, key, value))
        if self._qkv_same_embed_dim:
            q_w, k_w, v_w = _op("split", self.in_proj_weight, axis=0, output_num=3)
        else:
            q_w, k_w, v_w = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        out_w, out_b = self.out_proj.weight, self.out_proj.bias
        if self._amp_dtype is not None:
            # out_proj's parameters are read here rather than through its construct, so under mixed precision they
            # are cast to this cell's compute dtype as _run_amp casts this cell's own (in_proj_weight, ...)
            from ...ops import functional as F

            out_w, out_b = (p if p is None or p.dtype == self._amp_dtype else F.cast(p, self._amp_dtype)
                            for p in (out_w, out_b))
        out, weights = _op("multi_head_attention", query, key, value, q_w, k_w, v_w, self.in_proj_bias,
                           out_w, out_b, attn_mask, key_padding_mask,
                           num_heads=self.num_heads, dropout=self.dropout, training=self.training,
                           average_attn_weights=average_attn_weights)
        if unbatched:
            out = _op("squeeze", out, axis=[1])
            weights = _op("squeeze", weights, axis=[0])
        elif self.batch_first:
            out = _op("transpose", out, perm=[1, 0, 2])
        return out, (weights if need_weights else None)

    def extend_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with a residual connection and a LayerNorm (after
    it, or before it with norm_first). construct(src, src_mask=None, src_key_padding_mask=None)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__()
        self._build(2, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                    dtype)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask, "src_key_padding_mask")
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x))


class TransformerEncoder(_TransformerStack):
    """`num_layers` copies of `encoder_layer` (in layers "0", "1", ...), then `norm` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self._build("TransformerEncoder", "encoder_layer", TransformerEncoderLayer, encoder_layer, num_layers, norm)

    def construct(self, src, mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask, "src_key_padding_mask")
        output = src
        for layer in self.layers:
            output = layer(output, mask, src_key_padding_mask)
        return self._final_norm(output)


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention over tgt, attention from tgt to memory, then a feed-forward block; each with a
    residual connection and a LayerNorm (after it, or before it with norm_first).
    construct(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__()
        self._build(3, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                    dtype)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, memory, memory, key_padding_mask=key_padding_mask, need_weights=False,
                                attn_mask=attn_mask)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x))


class TransformerDecoder(_TransformerStack):
    """`num_layers` copies of `decoder_layer` (in layers "0", "1", ...), then `norm` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self._build("TransformerDecoder", "decoder_layer", TransformerDecoderLayer, decoder_layer, num_layers, norm)

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask)
        return self._final_norm(output)


class Transformer(Cell):
    """An encoder (`num_encoder_layers` TransformerEncoderLayers and a LayerNorm, or `custom_encoder`)
    and a decoder (`num_decoder_layers` TransformerDecoderLayers and a LayerNorm, or `custom_decoder`).
    Every parameter of two or more dimensions starts XavierUniform, as in MindSpore.
    construct(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None) returns the decoder's output."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        _check_bool(batch_first, "batch_first", name)
        for arg, value in (("custom_encoder", custom_encoder), ("custom_decoder", custom_decoder)):
            if value is not None and not isinstance(value, Cell):
                raise TypeError(f"For '{name}', the '{arg}' must be a Cell or None, but got {type(value).__name__}.")

        def stack(custom, layer_class, stack_class, num_layers):
            """`custom`, or num_layers layers of layer_class and a LayerNorm."""
            if custom is not None:
                return custom
            layer = layer_class(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                                norm_first, dtype=dtype)
            return stack_class(layer, num_layers, LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))

        self.encoder = stack(custom_encoder, TransformerEncoderLayer, TransformerEncoder, num_encoder_layers)
        self.decoder = stack(custom_decoder, TransformerDecoderLayer, TransformerDecoder, num_decoder_layers)
        for param in self.get_parameters():
            if len(param.shape) > 1:
                param.set_data(initializer(XavierUniform(), param.shape, param.dtype))
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        if len(src.shape) == 3:
            axis = 0 if self.batch_first else 1
            if len(tgt.shape) != 3 or src.shape[axis] != tgt.shape[axis]:
                raise ValueError(f"For 'Transformer', the number of batch size for 'src' and 'tgt' must be equal, "
                                 f"but got src shape {src.shape} and tgt shape {tgt.shape} "
                                 f"(batch_first={self.batch_first}).")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"For 'Transformer', the number of features for 'src' and 'tgt' must be equal to "
                             f"`d_model` {self.d_model}, but got src shape {src.shape} and tgt shape {tgt.shape}.")
        memory = self.encoder(src, src_mask, src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
