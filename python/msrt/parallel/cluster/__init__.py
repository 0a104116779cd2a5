"""`mindspore.parallel.cluster`: launching distributed jobs (`run`: msrun)."""
