"""The zip archives of torch.save: their records found where a reader can
map them, and written as torch's writer (miniz) lays them out.

Every record is stored (not compressed) under one top folder ("archive/"
for torch.save, though any name is read). Its data starts at a multiple of
64 bytes, padded by an extra field of id "FB" in its local header, so a
storage can be memory-mapped in place; torch's loader computes the same
offsets from the local headers. A record is written in one pass over its
bytes: its CRC and sizes follow the data in a data descriptor (flag bit 3),
as miniz writes them.
"""

import collections
import struct
import zipfile
import zlib

__all__ = ["ALIGNMENT", "Record", "ZipWriter", "read_directory"]

ALIGNMENT = 64

# A count, size or offset that reaches these does not fit zip's 16- and
# 32-bit fields: the field then holds all ones and the ZIP64 records the
# value.
_MAX_16 = 0xFFFF
_MAX_32 = 0xFFFFFFFF

# Each record of the format, and the signature it starts with.
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_DESCRIPTOR_32 = struct.Struct("<IIII")
_DESCRIPTOR_64 = struct.Struct("<IIQQ")
_DESCRIPTOR_SIGNATURE = 0x08074B50
_CENTRAL_HEADER = struct.Struct("<IHHHHHHIIIHHHHHII")
_CENTRAL_SIGNATURE = 0x02014B50
_ZIP64_END = struct.Struct("<IQHHIIQQQQ")
_ZIP64_END_SIGNATURE = 0x06064B50
_ZIP64_LOCATOR = struct.Struct("<IIQI")
_ZIP64_LOCATOR_SIGNATURE = 0x07064B50
_END = struct.Struct("<IHHHHIIH")
_END_SIGNATURE = 0x06054B50

_FLAGS = 0x0808  # bit 3: CRC and sizes in a data descriptor; bit 11: UTF-8 names
_DOS_DATE = 0x0021  # 1980-01-01, so that equal objects make equal files
_PADDING_ID = 0x4246  # "FB", torch's padding field

# A record's data: where it starts in the file, its length and its CRC-32.
Record = collections.namedtuple("Record", "offset size crc")


def read_directory(file, where):
    """{name: Record} of the stored records under the archive's top folder
    (named without it), each checked to lie inside the file. OSError for an
    archive zipfile cannot read, a compressed record or one that reaches
    past the end."""
    try:
        with zipfile.ZipFile(file) as archive:
            infos = archive.infolist()
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        NotImplementedError,
        ValueError,
    ) as e:
        raise OSError(f"[load] {where}: not a readable zip archive ({e}).") from None
    if not infos or "/" not in infos[0].filename:
        raise OSError(f"[load] {where}: the zip archive has no top folder, as torch.save writes.")
    folder = infos[0].filename.split("/", 1)[0] + "/"
    file_size = file.seek(0, 2)
    return {
        info.filename[len(folder) :]: _record(file, info, file_size, where)
        for info in infos
        if info.filename.startswith(folder)
    }


def _record(file, info, file_size, where):
    if info.compress_type != zipfile.ZIP_STORED:
        raise OSError(
            f"[load] {where}: the record {info.filename!r} is compressed; torch.save stores "
            "records uncompressed, and stride reads only those."
        )
    header = b""
    if 0 <= info.header_offset <= file_size - _LOCAL_HEADER.size:  # ZIP64 offsets reach 2**64
        file.seek(info.header_offset)
        header = file.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size or _LOCAL_HEADER.unpack(header)[0] != _LOCAL_SIGNATURE:
        raise OSError(f"[load] {where}: the local header of record {info.filename!r} is missing.")
    *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    # The local header's extra field (torch's padding) is not the central
    # directory's, so the data's offset comes from the local header.
    offset = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
    if offset + info.file_size > file_size or info.compress_size != info.file_size:
        raise OSError(
            f"[load] {where}: the record {info.filename!r} reaches past the end of the file "
            "(is it truncated?)."
        )
    return Record(offset, info.file_size, info.CRC)


class ZipWriter:
    """Writes stored records to a binary file object, which needs no seek.
    write() adds a record (its name taken under `folder`), close() the
    central directory."""

    def __init__(self, out, folder):
        self._out = out
        self._folder = folder + "/"
        self._offset = 0
        self._entries = []  # (name, crc, size, header offset)

    def _emit(self, data):
        self._out.write(data)
        self._offset += len(data)

    def write(self, name, data):
        """Adds the record `name` holding `data` (bytes or a uint8 array)."""
        data = memoryview(data).cast("B")
        name = (self._folder + name).encode()
        header_offset, size = self._offset, len(data)
        zip64 = self._local_zip64(size, header_offset)
        # The padding field itself takes 4 bytes; its data pads the rest.
        start = header_offset + _LOCAL_HEADER.size + len(name) + len(zip64) + 4
        padding = -start % ALIGNMENT
        extra = zip64 + struct.pack("<HH", _PADDING_ID, padding) + b"Z" * padding
        version = 45 if zip64 else 20
        self._emit(
            _LOCAL_HEADER.pack(
                _LOCAL_SIGNATURE, version, _FLAGS, 0, 0, _DOS_DATE, 0, 0, 0, len(name), len(extra)
            )
        )
        self._emit(name + extra)
        self._emit(data)
        crc = zlib.crc32(data)
        descriptor = _DESCRIPTOR_64 if zip64 else _DESCRIPTOR_32
        self._emit(descriptor.pack(_DESCRIPTOR_SIGNATURE, crc, size, size))
        self._entries.append((name, crc, size, header_offset))
        return crc

    @staticmethod
    def _local_zip64(size, header_offset):
        """The ZIP64 field of a local header, as miniz writes it (sizes zero:
        the descriptor holds them), or b"" when no field is past 32 bits."""
        if size < _MAX_32 and header_offset < _MAX_32:
            return b""
        values = (0, 0) if size >= _MAX_32 else ()
        values += (header_offset,) if header_offset >= _MAX_32 else ()
        return struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values)

    def close(self):
        """Writes the central directory and the end records."""
        directory_offset = self._offset
        for name, crc, size, header_offset in self._entries:
            self._emit_central_header(name, crc, size, header_offset)
        directory_size = self._offset - directory_offset
        count = len(self._entries)
        if count >= _MAX_16 or directory_offset >= _MAX_32 or directory_size >= _MAX_32:
            zip64_end = self._offset
            self._emit(
                _ZIP64_END.pack(
                    _ZIP64_END_SIGNATURE,
                    _ZIP64_END.size - 12,  # the record's size after this field
                    45,
                    45,
                    0,
                    0,
                    count,
                    count,
                    directory_size,
                    directory_offset,
                )
            )
            self._emit(_ZIP64_LOCATOR.pack(_ZIP64_LOCATOR_SIGNATURE, 0, zip64_end, 1))
        self._emit(
            _END.pack(
                _END_SIGNATURE,
                0,
                0,
                _field(count, _MAX_16, 0xFFFF),
                _field(count, _MAX_16, 0xFFFF),
                _field(directory_size, _MAX_32, 0xFFFFFFFF),
                _field(directory_offset, _MAX_32, 0xFFFFFFFF),
                0,
            )
        )

    def _emit_central_header(self, name, crc, size, header_offset):
        # The ZIP64 field holds, in this order, the sizes and the offset that
        # do not fit their 32-bit fields.
        values = (size, size) if size >= _MAX_32 else ()
        values += (header_offset,) if header_offset >= _MAX_32 else ()
        extra = struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values) if values else b""
        version = 45 if values else 20
        self._emit(
            _CENTRAL_HEADER.pack(
                _CENTRAL_SIGNATURE,
                version,
                version,
                _FLAGS,
                0,
                0,
                _DOS_DATE,
                crc,
                _field(size, _MAX_32, 0xFFFFFFFF),
                _field(size, _MAX_32, 0xFFFFFFFF),
                len(name),
                len(extra),
                0,
                0,
                0,
                0,
                _field(header_offset, _MAX_32, 0xFFFFFFFF),
            )
        )
        self._emit(name + extra)


def _field(value, limit, all_ones):
    """value for a zip field, or all ones when it is past the field's limit
    and the ZIP64 records hold it."""
    return value if value < limit else all_ones
