"""Evaluation metrics."""
from .metric import (MAE, MSE, Accuracy, Loss, Metric, Top1CategoricalAccuracy, Top5CategoricalAccuracy,
                     TopKCategoricalAccuracy, get_metric_fn, get_metrics, names)

__all__ = ["MAE", "MSE", "Accuracy", "Loss", "Metric", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
           "TopKCategoricalAccuracy", "get_metric_fn", "get_metrics", "names"]
