"""Laying rows out in the pages of one shard, as MindSpore's shard writer does
(Note [MindRecord layout] in _format.py).

Each call to `ShardWriter.write` places its rows as MindSpore places one
write_raw_data call's rows of a shard: the rows are cut into groups that fit a
page (by blob bytes and by raw bytes); the first group goes on the last blob
page while it fits, each further group on a new blob page; their raw fields
follow on the last raw page while it has room, else on a new one (a raw page
that overflows while the last blob page is still being filled first moves
that page's last row group to a new raw page). Pages are numbered in the
order they are made. The bytes go to a temporary file at their final offsets
as they are placed (PendingFile in msrt/_files.py); `commit` writes the header
at offset 0, puts the file in place and writes the index beside it.
"""
import os

from .. import _files
from . import _format

_COPY_CHUNK = 1 << 24


class ShardWriter:
    """The pages, row locations and index values of one shard being written."""

    def __init__(self, path, shard_id, header_size, page_size):
        self.path, self.shard_id, self.header_size, self.page_size = path, shard_id, header_size, page_size
        self.pages = []
        self.locations = []  # per row: _format.INDEX_COLUMNS
        self.index_values = []
        self.file = _files.PendingFile(path)

    @classmethod
    def reopen(cls, shard):
        """A writer that continues `shard` (an opened _format.Shard): its pages' bytes are
        copied to the new file, its rows kept."""
        values = shard.index_values()
        writer = cls(shard.path, shard.shard_id, shard.header_size, shard.page_size)
        writer.pages = [_format.Page(p.page_id, p.shard_id, p.page_type, p.page_type_id, p.start_row_id, p.end_row_id,
                                     p.row_group_ids, p.page_size) for p in shard.pages]
        writer.locations = shard.locations.tolist()
        writer.index_values = values
        try:
            fd = os.open(shard.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as error:
            writer.file.discard()
            raise OSError(error.errno, f"cannot open '{shard.path}': {error.strerror}") from None
        try:
            for page in writer.pages:
                start = writer._offset(page.page_id)
                for at in range(0, page.page_size, _COPY_CHUNK):
                    size = min(_COPY_CHUNK, page.page_size - at)
                    data = os.pread(fd, size, start + at)
                    if len(data) != size:
                        raise _format.MindRecordFormatError(f"Invalid MindRecord file '{shard.path}': it changed "
                                                            f"while being read (page {page.page_id} is cut short).")
                    writer.file.write(start + at, data)
        except BaseException:
            writer.file.discard()
            raise
        finally:
            os.close(fd)
        return writer

    def _offset(self, page_id):
        return self.header_size + self.page_size * page_id

    def _last(self, page_type):
        for page in reversed(self.pages):
            if page.page_type == page_type:
                return page
        return None

    def write(self, raws, blobs, values):
        """Places rows: `raws` their MessagePack bytes, `blobs` their blobs, `values` their
        index fields' values. ValueError (nothing placed) when a row does not fit a page."""
        n = len(raws)
        if not n:
            return
        raw_sizes = [8 + len(r) for r in raws]
        blob_sizes = [8 + len(b) for b in blobs]
        for sizes, what in ((raw_sizes, "raw fields"), (blob_sizes, "blob")):
            if max(sizes) > self.page_size:
                raise ValueError(f"Page size {self.page_size} is too small to save the {what} of a row "
                                 f"({max(sizes)} bytes); call set_page_size with a larger value (at most "
                                 f"{_format.MAX_PAGE_SIZE}).")
        first_row = len(self.locations)
        rows = [[first_row + i, 0, 0, 0, 0, 0, 0, 0] for i in range(n)]
        groups = self._cut(raw_sizes, blob_sizes)
        self._place_blobs(groups, blobs, blob_sizes, rows)
        self._place_raws(groups, raws, raw_sizes, rows)
        self.locations.extend(rows)
        self.index_values.extend(values)

    def _cut(self, raw_sizes, blob_sizes):
        """Row groups [start, end): the first continues the last blob page (may be empty)."""
        last_blob, last_raw = self._last(_format.BLOB_PAGE), self._last(_format.RAW_PAGE)
        blob_bytes = last_blob.page_size if last_blob else 0
        raw_bytes = last_raw.page_size - last_raw.row_group_ids[-1][1] if last_raw and last_raw.row_group_ids else 0
        groups, start = [], 0
        for i, (raw, blob) in enumerate(zip(raw_sizes, blob_sizes)):
            if blob_bytes == 0 or blob_bytes + blob > self.page_size or raw_bytes + raw > self.page_size:
                groups.append((start, i))
                start, blob_bytes, raw_bytes = i, blob, raw
            else:
                blob_bytes += blob
                raw_bytes += raw
        groups.append((start, len(raw_sizes)))
        return groups

    def _write_records(self, offset, records, sizes, rows, columns, page_id, group=None):
        """Writes length-prefixed `records` from `offset` (in the file); fills each row's page
        and offsets (`columns`: indices of page id, start, end in a location)."""
        start = offset - self._offset(page_id)
        chunks = []
        for record, size, row in zip(records, sizes, rows):
            chunks.append(len(record).to_bytes(8, "little"))
            chunks.append(record)
            row[columns[0]], row[columns[1]], row[columns[2]] = page_id, start, start + size
            if group is not None:
                row[1] = group
            start += size
        self.file.write(offset, b"".join(chunks))

    def _place_blobs(self, groups, blobs, sizes, rows):
        last_blob = self._last(_format.BLOB_PAGE)
        start, end = groups[0]
        if start != end:  # the first group continues the last blob page
            self._write_records(self._offset(last_blob.page_id) + last_blob.page_size, blobs[start:end],
                                sizes[start:end], rows[start:end], (5, 6, 7), last_blob.page_id,
                                last_blob.page_type_id)
            last_blob.page_size += sum(sizes[start:end])
            last_blob.end_row_id += end - start
        type_id = last_blob.page_type_id if last_blob else -1
        row_id = last_blob.end_row_id if last_blob else 0
        for start, end in groups[1:]:
            page_id = len(self.pages)
            type_id += 1
            self._write_records(self._offset(page_id), blobs[start:end], sizes[start:end], rows[start:end], (5, 6, 7),
                                page_id, type_id)
            self.pages.append(_format.Page(page_id, self.shard_id, _format.BLOB_PAGE, type_id, row_id,
                                           row_id + end - start, [], sum(sizes[start:end])))
            row_id += end - start

    def _shift_raw_page(self, last_raw):
        """Moves the last row group of the full raw page `last_raw` to a new raw page."""
        group_id, group_offset = last_raw.row_group_ids[-1]
        size = last_raw.page_size - group_offset
        moved = self.file.read(self._offset(last_raw.page_id) + group_offset, size)
        page_id = len(self.pages)
        self.file.write(self._offset(page_id), moved)
        last_raw.page_size = group_offset
        last_raw.row_group_ids.pop()
        page = _format.Page(page_id, self.shard_id, _format.RAW_PAGE, last_raw.page_id + 1, 0, 0, [[group_id, 0]], size)
        self.pages.append(page)
        for location in reversed(self.locations):
            if location[2] != last_raw.page_id or location[3] < group_offset:
                break
            location[2], location[3], location[4] = page_id, location[3] - group_offset, location[4] - group_offset
        return page

    def _place_raws(self, groups, raws, sizes, rows):
        last_raw = self._last(_format.RAW_PAGE)
        start, end = groups[0]
        if start != end and sum(sizes[start:end]) + last_raw.page_size > self.page_size:
            last_raw = self._shift_raw_page(last_raw)
        group_id = last_raw.row_group_ids[-1][0] if last_raw and last_raw.row_group_ids else -1
        for k, (start, end) in enumerate(groups):
            if start == end:
                continue
            size = sum(sizes[start:end])
            if last_raw is None or last_raw.page_size + size > self.page_size:
                last_raw = _format.Page(len(self.pages), self.shard_id, _format.RAW_PAGE,
                                        last_raw.page_id + 1 if last_raw else 0, 0, 0, [], 0)
                self.pages.append(last_raw)
            if k > 0:
                group_id += 1
                last_raw.row_group_ids.append([group_id, last_raw.page_size])
            self._write_records(self._offset(last_raw.page_id) + last_raw.page_size, raws[start:end], sizes[start:end],
                                rows[start:end], (2, 3, 4), last_raw.page_id)
            last_raw.page_size += size

    def header(self, text):
        """Writes the header (`text`, UTF-8 JSON) at the start of the file."""
        if len(text) + 8 > self.header_size:
            raise ValueError(f"The header of '{self.path}' needs {len(text) + 8} bytes, more than the header size "
                             f"{self.header_size}; call set_header_size with a larger value (at most "
                             f"{_format.MAX_HEADER_SIZE}).")
        self.file.write(0, len(text).to_bytes(8, "little") + text)

    def commit(self, index_fields):
        """Puts the data file in place and writes its index (`index_fields`: [(name, type)])."""
        self.file.commit()
        name = os.path.basename(self.path)
        _files.write_atomic(self.path + _format.INDEX_SUFFIX,
                            _format.encode_index(name, index_fields, self.locations, self.index_values))

    def discard(self):
        self.file.discard()
