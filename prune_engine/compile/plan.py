"""PLACEHOLDER while the compiler is written (replaced in this session)."""


class PruningProgram:
    pass


def compile_predicate(expr, schema):
    raise NotImplementedError("compiler not yet landed")
