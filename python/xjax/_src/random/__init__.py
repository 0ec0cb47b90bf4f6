"""The PRNG: the threefry2x32 primitive, key operations on raw key data, typed keys, samplers."""
