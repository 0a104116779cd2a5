"""`nn.metrics`: the evaluation metrics where MindSpore 1.x kept them (they
are msrt.train.metrics' classes). Resolved on first use: msrt.nn is imported
while msrt.train (which builds on it) is not yet."""
_NAMES = ("MAE", "MSE", "Accuracy", "Loss", "Metric", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
          "TopKCategoricalAccuracy", "Precision", "Recall", "Fbeta", "F1", "ConfusionMatrix", "get_metric_fn",
          "get_metrics", "names")
__all__ = list(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        from ..train import metrics

        return getattr(metrics, name)
    raise AttributeError(f"module 'msrt.nn.metrics' has no attribute '{name}'")
