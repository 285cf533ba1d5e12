"""String bounds compared through uint64 prefix keys must agree with Arrow's byte order."""

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_engine.evaluate.domains import OPS_ARROW, ArrowDomain, bool_numpy
from tests.budget import examples

# short alphabets make ties (equal 8-byte prefixes, NUL padding) common
texts = st.text(alphabet=["a", "b", "\0", "é", "😀"], max_size=12)
blobs = st.binary(max_size=12).map(lambda b: b.replace(b"\x01", b"\x00"))


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from([pa.string(), pa.large_string(), pa.binary()]), st.data())
def test_keyed_comparisons_match_arrow(typ, data):
    values = st.one_of(texts, st.none()) if typ != pa.binary() else st.one_of(blobs, st.none())
    left = data.draw(st.lists(values, min_size=1, max_size=20))
    right = data.draw(st.lists(values, min_size=len(left), max_size=len(left)))
    lit = data.draw(texts if typ != pa.binary() else blobs)
    a, b = pa.array(left, typ), pa.array(right, typ)
    d = ArrowDomain(typ)
    (ka, va), (kb, _) = d.view(a), d.view(b)
    valid = va if va is not None else True
    for op, fn in OPS_ARROW.items():
        expected = bool_numpy(fn(a, pa.scalar(lit, typ)))
        assert ((d.compare(ka, op, pa.scalar(lit, typ)) == expected) | ~valid).all(), (op, lit)
        both = bool_numpy(pc_valid(a, b))
        assert ((d.compare_arrays(ka, op, kb) == bool_numpy(fn(a, b))) | ~both).all(), op


def pc_valid(a, b):
    import pyarrow.compute as pc

    return pc.and_(pc.is_valid(a), pc.is_valid(b))
