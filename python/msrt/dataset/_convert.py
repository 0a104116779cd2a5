"""The one place where pipeline output becomes an msrt tensor."""


def to_tensor(array):
    """Wraps a NumPy array produced by a pipeline as an `msrt.Tensor`."""
    import msrt

    return msrt.Tensor(array)
