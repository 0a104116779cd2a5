"""Evaluation metrics."""
from .metric import (F1, MAE, MSE, Accuracy, ConfusionMatrix, Fbeta, Loss, Metric, Precision, Recall,
                     Top1CategoricalAccuracy, Top5CategoricalAccuracy, TopKCategoricalAccuracy, get_metric_fn,
                     get_metrics, names)

__all__ = ["MAE", "MSE", "Accuracy", "Loss", "Metric", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
           "TopKCategoricalAccuracy", "Precision", "Recall", "Fbeta", "F1", "ConfusionMatrix", "get_metric_fn",
           "get_metrics", "names"]
