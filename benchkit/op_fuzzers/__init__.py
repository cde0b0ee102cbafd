"""The op fuzzers torch.utils.benchmark ships, drawing the same cases for the same seed, in
the same modules: `benchkit.op_fuzzers.binary.BinaryOpFuzzer`, `.unary.UnaryOpFuzzer`,
`.spectral.SpectralOpFuzzer`, `.sparse_binary.BinaryOpSparseFuzzer`,
`.sparse_unary.UnaryOpSparseFuzzer`; each is also importable from `benchkit.op_fuzzers`."""
from benchkit.op_fuzzers.binary import BinaryOpFuzzer
from benchkit.op_fuzzers.sparse_binary import BinaryOpSparseFuzzer
from benchkit.op_fuzzers.sparse_unary import UnaryOpSparseFuzzer
from benchkit.op_fuzzers.spectral import SpectralOpFuzzer
from benchkit.op_fuzzers.unary import UnaryOpFuzzer

__all__ = ["BinaryOpFuzzer", "BinaryOpSparseFuzzer", "SpectralOpFuzzer", "UnaryOpFuzzer",
           "UnaryOpSparseFuzzer"]
