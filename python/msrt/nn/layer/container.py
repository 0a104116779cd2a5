"""SequentialCell, CellList and CellDict."""
from collections import OrderedDict

from ..cell import Cell

__all__ = ["SequentialCell", "CellList", "CellDict"]


def _check_cell(cell, owner):
    if not isinstance(cell, Cell):
        raise TypeError(f"For '{owner}', each cell must be a Cell, but got {type(cell).__name__}.")
    return cell


def _valid_index(length, index, owner):
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"For '{owner}', the index must be int or slice, but got {type(index).__name__}.")
    if not -length <= index < length:
        raise IndexError(f"For '{owner}', the index must be in range [{-length}, {length}), but got {index}.")
    return index % length


class SequentialCell(Cell):
    """Runs its cells in order, each on the previous one's output.

    Built from cells, a list of cells or an OrderedDict of named cells;
    children are named "0", "1", ... (or by the dict's keys).
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (list, OrderedDict)):
            cells = args[0]
            items = cells.items() if isinstance(cells, OrderedDict) else ((str(i), c) for i, c in enumerate(cells))
        elif len(args) == 1 and not isinstance(args[0], Cell):
            raise TypeError(f"For 'SequentialCell', the argument must be cells, a list of cells or an OrderedDict, "
                            f"but got {type(args[0]).__name__}.")
        else:
            items = ((str(i), c) for i, c in enumerate(args))
        for name, cell in items:
            self._append_named(name, cell)
        self.cell_list = list(self._cells.values())

    def _append_named(self, name, cell):
        _check_cell(cell, "SequentialCell")
        self.insert_child_to_cell(name, cell)
        cell.update_parameters_name(name + ".")

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.__class__(OrderedDict(list(self._cells.items())[index]))
        return list(self._cells.values())[_valid_index(len(self), index, self.cls_name)]

    def __setitem__(self, index, cell):
        _check_cell(cell, self.cls_name)
        key = list(self._cells.keys())[_valid_index(len(self), index, self.cls_name)]
        self._cells[key] = cell
        self.__dict__[key] = cell
        cell.update_parameters_name(key + ".")
        self.cell_list = list(self._cells.values())

    def __delitem__(self, index):
        keys = list(self._cells.keys())
        targets = keys[index] if isinstance(index, slice) else [keys[_valid_index(len(self), index, self.cls_name)]]
        for key in targets:
            del self._cells[key]
            self.__dict__.pop(key, None)
        self.cell_list = list(self._cells.values())

    def __len__(self):
        return len(self._cells)

    def __bool__(self):
        return len(self._cells) > 0

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell):
        """Appends a cell at the end."""
        if str(len(self)) in self._cells:
            raise KeyError(f"For '{self.cls_name}', a cell named '{len(self)}' exists already.")
        self._append_named(str(len(self)), cell)
        self.cell_list = list(self._cells.values())
        return self

    def _reset(self, items):
        for key in list(self._cells.keys()):
            self.__dict__.pop(key, None)
        self._cells.clear()
        for name, cell in items:
            self._append_named(name, cell)
        self.cell_list = list(self._cells.values())

    def insert(self, index, cell):
        """Inserts `cell` before position `index`; cells named by position are renumbered (and their
        parameters renamed) as MindSpore does."""
        _check_cell(cell, self.cls_name)
        length = len(self)
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"For '{self.cls_name}', the index must be int, but got {type(index).__name__}.")
        if not -length <= index <= length:
            raise IndexError(f"For '{self.cls_name}', the index must be in range [{-length}, {length}], "
                             f"but got {index}.")
        index = index + length if index < 0 else index
        items = list(self._cells.items())
        numbered = all(key == str(i) for i, (key, _) in enumerate(items))
        if not numbered and str(index) in self._cells:
            raise KeyError(f"For '{self.cls_name}', a cell named '{index}' exists already.")
        items.insert(index, (str(index), cell))
        if numbered:
            items = [(str(i), c) for i, (_, c) in enumerate(items)]
        self._reset(items)
        return self

    def extend(self, cells):
        """Appends every cell of an iterable."""
        if isinstance(cells, Cell) and not isinstance(cells, (CellList, SequentialCell)):
            raise TypeError(f"For '{self.cls_name}', the argument of 'extend' must be an iterable of cells, "
                            f"but got {type(cells).__name__}.")
        for cell in list(cells):
            self.append(cell)
        return self

    def construct(self, input_data):
        for cell in self.cell_list:
            input_data = cell(input_data)
        return input_data


class CellList(Cell):
    """Holds cells in a list (children "0", "1", ...); not callable itself."""

    def __init__(self, *args, **kwargs):
        auto_prefix = kwargs.pop("auto_prefix", True)
        if kwargs:
            raise TypeError(f"For 'CellList', unexpected keyword arguments {sorted(kwargs)}.")
        super().__init__(auto_prefix=auto_prefix)
        if len(args) > 1:
            raise TypeError(f"For 'CellList', expected at most 1 argument (a list of cells), got {len(args)}.")
        if args and args[0] is not None:
            self.extend(args[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.__class__(list(self._cells.values())[index])
        return list(self._cells.values())[_valid_index(len(self), index, self.cls_name)]

    def __setitem__(self, index, cell):
        _check_cell(cell, self.cls_name)
        key = str(_valid_index(len(self), index, self.cls_name))
        if self._auto_prefix:
            cell.update_parameters_name(key + ".")
        self._cells[key] = cell
        self.__dict__[key] = cell

    def __delitem__(self, index):
        cells = list(self._cells.values())
        if isinstance(index, slice):
            del cells[index]
        else:
            del cells[_valid_index(len(self), index, self.cls_name)]
        for key in list(self._cells.keys()):
            self.__dict__.pop(key, None)
        self._cells.clear()
        self.extend(cells)

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def __iadd__(self, cells):
        self.extend(cells)
        return self

    def insert(self, index, cell):
        """Inserts `cell` before `index`."""
        cells = list(self._cells.values())
        cells.insert(index, _check_cell(cell, self.cls_name))
        for key in list(self._cells.keys()):
            self.__dict__.pop(key, None)
        self._cells.clear()
        self.extend(cells)

    def extend(self, cells):
        """Appends every cell of an iterable."""
        if isinstance(cells, Cell) and not isinstance(cells, CellList):
            raise TypeError(f"For 'CellList', the argument of 'extend' must be an iterable of cells, "
                            f"but got {type(cells).__name__}.")
        for cell in cells:
            self.append(cell)
        return self

    def append(self, cell):
        """Appends a cell at the end."""
        _check_cell(cell, self.cls_name)
        key = str(len(self))
        if self._auto_prefix:
            cell.update_parameters_name(key + ".")
        self._cells[key] = cell
        self.__dict__[key] = cell
        return self

    def construct(self, *inputs):
        raise NotImplementedError("CellList holds cells; call them one by one.")


class CellDict(Cell):
    """Holds cells by name, in insertion order, as MindSpore 2.x's `nn.CellDict`: built from a dict, an
    OrderedDict or an iterable of (name, cell) pairs; each cell's parameters are prefixed with its name;
    not callable itself."""

    def __init__(self, *args, **kwargs):
        auto_prefix = kwargs.pop("auto_prefix", True)
        if kwargs:
            raise TypeError(f"For 'CellDict', unexpected keyword arguments {sorted(kwargs)}.")
        super().__init__(auto_prefix=auto_prefix)
        if len(args) > 1:
            raise TypeError(f"For 'CellDict', expected at most 1 argument, got {len(args)}.")
        if args and args[0] is not None:
            self.update(args[0])

    def _check_key(self, key):
        if not isinstance(key, str):
            raise TypeError(f"For '{self.cls_name}', the key must be str, but got {type(key).__name__}.")
        if not key or "." in key:
            raise KeyError(f"For '{self.cls_name}', the key must be a non-empty str without '.', but got {key!r}.")
        if key in self._params or (key in self.__dict__ and key not in self._cells):
            raise KeyError(f"For '{self.cls_name}', the key {key!r} is an attribute of the CellDict.")
        return key

    def __getitem__(self, key):
        if key not in self._cells:
            raise KeyError(f"For '{self.cls_name}', there is no cell named {key!r}.")
        return self._cells[key]

    def __setitem__(self, key, cell):
        self._check_key(key)
        _check_cell(cell, self.cls_name)
        if self._auto_prefix:
            cell.update_parameters_name(key + ".")
        self._cells[key] = cell
        self.__dict__[key] = cell

    def __delitem__(self, key):
        if key not in self._cells:
            raise KeyError(f"For '{self.cls_name}', there is no cell named {key!r}.")
        del self._cells[key]
        self.__dict__.pop(key, None)

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.keys())

    def __contains__(self, key):
        return key in self._cells

    def clear(self):
        """Removes every cell."""
        for key in list(self._cells.keys()):
            del self[key]

    def pop(self, key):
        """Removes the cell named `key` and returns it."""
        cell = self[key]
        del self[key]
        return cell

    def keys(self):
        return self._cells.keys()

    def values(self):
        return self._cells.values()

    def items(self):
        return self._cells.items()

    def update(self, cells):
        """Adds (or replaces) cells from a dict, an OrderedDict, a CellDict or an iterable of (name, cell)."""
        if isinstance(cells, (dict, CellDict)):
            pairs = list(cells.items())
        elif isinstance(cells, Cell) or isinstance(cells, (str, bytes)) or not hasattr(cells, "__iter__"):
            raise TypeError(f"For '{self.cls_name}', the cells must be a dict, an OrderedDict, a CellDict or an "
                            f"iterable of (name, cell) pairs, but got {type(cells).__name__}.")
        else:
            pairs = []
            for index, pair in enumerate(cells):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise TypeError(f"For '{self.cls_name}', element {index} of the cells must be a (name, cell) "
                                    f"pair, but got {pair!r}.")
                pairs.append(tuple(pair))
        for key, cell in pairs:  # checked before any is added
            self._check_key(key)
            _check_cell(cell, self.cls_name)
        for key, cell in pairs:
            self[key] = cell

    def construct(self, *inputs):
        raise NotImplementedError("CellDict holds cells; call them by name.")
