"""Warning classes msrt issues (filter them with the `warnings` module)."""


class MsrtWarning(UserWarning):
    """Base class of every warning msrt issues."""


class ContextDeprecationWarning(MsrtWarning, FutureWarning):
    """A context key, alias or value that still works but is going away."""


class DeviceNotApplicableWarning(MsrtWarning):
    """A context key that has no effect on the current device target."""
