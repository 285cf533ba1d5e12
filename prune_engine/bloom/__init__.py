"""Parquet split-block Bloom filters as a statistics index: read from the files
(:mod:`.read`), held per container in the ``bloom_filter`` column (:mod:`.format`), probed
for ``=``, ``IN`` and join keys (:mod:`.probe`) with the values encoded as each file's writer
hashed them (:mod:`.encoding`)."""
