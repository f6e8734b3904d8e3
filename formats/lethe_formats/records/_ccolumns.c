/*
 * _ccolumns: walks the plain magic-2 batches of a segment into fixed-size column rows.
 *
 * Theory of operation
 * -------------------
 * A fleet audit turns every record of a log into a table row. Creating a
 * Python object per record (the Record values of _cscan.decode_section) costs
 * more than everything else the audit does with the record, so this walker
 * writes, per batch and per record, one packed C struct (BatchRow, RecordRow)
 * into a growing buffer and hands the buffers back as two bytes objects. The
 * caller views them as arrays of those structs (columns.py describes the
 * layout) and never touches a record in Python.
 *
 *   walk(buffer, position, crc32c, decompress, max_records)
 *       -> (next_position, batch_rows: bytes, record_rows: bytes)
 *
 * The walker takes only what it can decode completely and exactly as the
 * full rules would; it stops, before the entry, at anything else and leaves
 * that entry to lethe_formats.records.scan (the one place with the error
 * messages):
 *
 *   - fewer than 61 bytes left, a batch length < 49 or beyond the buffer,
 *     a magic other than 2 (legacy message sets, torn tails);
 *   - a control batch (attribute bit 5: its records are markers);
 *   - a CRC-32C mismatch;
 *   - a codec id above 4, or any codec when `decompress` is None;
 *   - a negative recordsCount, or a records section that does not decode
 *     into exactly recordsCount records (the batch's rows are taken back);
 *   - `decompress(codec, memoryview)` raising an Exception (cleared here;
 *     the full path raises it again with its position); it may return any
 *     bytes-like object, read in place;
 *   - max_records rows written already (checked before each batch).
 *
 * A record (DefaultRecord.java) is read with the bounds of _cscan.c: varints
 * of at most 5 bytes (32 bits) or 10 (64), every length inside the record
 * body, the body inside the section, the fields ending exactly at the body's
 * end, the section ending exactly after the last record. Offsets and
 * timestamps are 64-bit two's complement sums, as Java's long arithmetic.
 *
 * key_hash is XXH64 (seed 0) of the key bytes as a signed 64-bit value, 0
 * with key_size -1 for a null key; XXH64 is written here from its
 * specification (github.com/Cyan4973/xxHash, doc/xxhash_spec.md).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One row per batch; the layout is mirrored in columns.py (BATCH_FIELDS). */
typedef struct {
    int64_t position;
    int64_t base_offset;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int64_t crc; /* the stored CRC, unsigned 32-bit */
    int32_t size; /* batch length + 12 */
    int32_t last_offset_delta;
    int32_t partition_leader_epoch;
    int32_t base_sequence;
    int32_t records_count;
    int16_t attributes;
    int16_t producer_epoch;
} BatchRow;

/* One row per record; mirrored in columns.py (RECORD_FIELDS). */
typedef struct {
    int64_t offset;
    int64_t timestamp;
    int64_t key_hash;
    int32_t key_size;   /* -1: null key */
    int32_t value_size; /* -1: null value (a tombstone) */
    int32_t headers_count;
    int32_t batch; /* index of the record's batch row in this call's batch rows */
    int32_t attributes;
    int32_t pad;
} RecordRow;

typedef struct {
    char *data;
    Py_ssize_t len, cap; /* in bytes */
} Growing;

static int grow(Growing *g, Py_ssize_t more) {
    if (g->len + more <= g->cap)
        return 0;
    Py_ssize_t cap = g->cap ? g->cap : 1 << 16;
    while (cap < g->len + more)
        cap *= 2;
    char *data = PyMem_Realloc(g->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    g->data = data;
    g->cap = cap;
    return 0;
}

/* ---- XXH64 ------------------------------------------------------------- */

static const uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL,
                      P3 = 0x165667B19E3779F9ULL, P4 = 0x85EBCA77C2B2AE63ULL,
                      P5 = 0x27D4EB2F165667C5ULL;

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static uint32_t le32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static uint64_t xxh_round(uint64_t acc, uint64_t lane) {
    acc += lane * P2;
    return rotl64(acc, 31) * P1;
}

static uint64_t xxh_merge(uint64_t acc, uint64_t v) {
    acc ^= xxh_round(0, v);
    return acc * P1 + P4;
}

static uint64_t xxh64(const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
        const uint8_t *limit = end - 32;
        do {
            v1 = xxh_round(v1, le64(p));
            v2 = xxh_round(v2, le64(p + 8));
            v3 = xxh_round(v3, le64(p + 16));
            v4 = xxh_round(v4, le64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxh_merge(h, v1);
        h = xxh_merge(h, v2);
        h = xxh_merge(h, v3);
        h = xxh_merge(h, v4);
    } else {
        h = P5;
    }
    h += (uint64_t)len;
    while (end - p >= 8) {
        h ^= xxh_round(0, le64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8;
    }
    if (end - p >= 4) {
        h ^= (uint64_t)le32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= (uint64_t)(*p) * P5;
        h = rotl64(h, 11) * P1;
        p++;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ---- records ----------------------------------------------------------- */

static uint64_t be(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Zig-zag varint in buf[*pos, limit); 0 on success, -1 when it does not read. */
static int varint(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes, int bits,
                  int64_t *out) {
    Py_ssize_t start = *pos;
    uint64_t raw = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (start + i >= limit)
            return -1;
        uint64_t b = buf[start + i];
        int shift = 7 * i;
        uint64_t group = b & 0x7F;
        if (shift + 7 > 64 && (group >> (64 - shift)) != 0)
            return -1;
        raw |= group << shift;
        if (!(b & 0x80)) {
            if (bits < 64 && (raw >> bits) != 0)
                return -1;
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            *pos = start + i + 1;
            return 0;
        }
    }
    return -1;
}

/* A length-prefixed field: its size (-1 null) and start; -1 when it does not read. */
static int field(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t limit, int allow_null,
                 int32_t *size, Py_ssize_t *at) {
    int64_t n;
    if (varint(buf, pos, limit, 5, 32, &n) < 0)
        return -1;
    if (n < 0) {
        if (!allow_null)
            return -1;
        *size = -1;
        *at = *pos;
        return 0;
    }
    if (n > limit - *pos)
        return -1;
    *size = (int32_t)n;
    *at = *pos;
    *pos += (Py_ssize_t)n;
    return 0;
}

/* Appends `count` RecordRows for the section buf[0, size); -1 when it does not decode. */
static int section_rows(const uint8_t *buf, Py_ssize_t size, int64_t count, const BatchRow *b,
                        int32_t batch, Growing *out) {
    Py_ssize_t pos = 0;
    int log_append = (b->attributes & 0x08) != 0;
    if (count > size / 7) /* a record takes at least 7 bytes */
        return -1;
    if (grow(out, (Py_ssize_t)count * (Py_ssize_t)sizeof(RecordRow)) < 0)
        return -2;
    RecordRow *row = (RecordRow *)(out->data + out->len);
    for (int64_t i = 0; i < count; i++, row++) {
        int64_t length, ts_delta, off_delta, headers;
        Py_ssize_t at, value_at, header_at;
        int32_t key_size, value_size, header_size;
        if (varint(buf, &pos, size, 5, 32, &length) < 0 || length < 1 || length > size - pos)
            return -1;
        Py_ssize_t limit = pos + (Py_ssize_t)length;
        int8_t attributes = (int8_t)buf[pos++];
        if (varint(buf, &pos, limit, 10, 64, &ts_delta) < 0 ||
            varint(buf, &pos, limit, 5, 32, &off_delta) < 0 ||
            field(buf, &pos, limit, 1, &key_size, &at) < 0 ||
            field(buf, &pos, limit, 1, &value_size, &value_at) < 0 ||
            varint(buf, &pos, limit, 5, 32, &headers) < 0 || headers < 0)
            return -1;
        for (int64_t h = 0; h < headers; h++) {
            if (field(buf, &pos, limit, 0, &header_size, &header_at) < 0 ||
                field(buf, &pos, limit, 1, &header_size, &header_at) < 0)
                return -1;
        }
        if (pos != limit)
            return -1;
        row->offset = (int64_t)((uint64_t)b->base_offset + (uint64_t)off_delta);
        row->timestamp = log_append
                             ? b->max_timestamp
                             : (int64_t)((uint64_t)b->base_timestamp + (uint64_t)ts_delta);
        row->key_hash = key_size < 0 ? 0 : (int64_t)xxh64(buf + at, (size_t)key_size);
        row->key_size = key_size;
        row->value_size = value_size;
        row->headers_count = (int32_t)headers;
        row->batch = batch;
        row->attributes = attributes;
        row->pad = 0;
    }
    if (pos != size)
        return -1;
    out->len += (Py_ssize_t)count * (Py_ssize_t)sizeof(RecordRow);
    return 0;
}

/* ---- batches ----------------------------------------------------------- */

static void batch_row(const uint8_t *p, Py_ssize_t position, BatchRow *b) {
    b->position = position;
    b->base_offset = (int64_t)be(p, 8);
    b->size = (int32_t)be(p + 8, 4) + 12;
    b->partition_leader_epoch = (int32_t)be(p + 12, 4);
    b->crc = (int64_t)be(p + 17, 4);
    b->attributes = (int16_t)be(p + 21, 2);
    b->last_offset_delta = (int32_t)be(p + 23, 4);
    b->base_timestamp = (int64_t)be(p + 27, 8);
    b->max_timestamp = (int64_t)be(p + 35, 8);
    b->producer_id = (int64_t)be(p + 43, 8);
    b->producer_epoch = (int16_t)be(p + 51, 2);
    b->base_sequence = (int32_t)be(p + 53, 4);
    b->records_count = (int32_t)be(p + 57, 4);
}

/* 1 when the stored CRC matches, 0 when not, -1 on a Python error. */
static int crc_matches(PyObject *crc_func, const uint8_t *p, Py_ssize_t size) {
    PyObject *view = PyMemoryView_FromMemory((char *)p + 21, size - 21, PyBUF_READ);
    if (view == NULL)
        return -1;
    PyObject *computed = PyObject_CallOneArg(crc_func, view);
    Py_DECREF(view);
    if (computed == NULL)
        return -1;
    unsigned long long value = PyLong_AsUnsignedLongLong(computed);
    Py_DECREF(computed);
    if (value == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    return value == be(p + 17, 4);
}

/* The records section of a compressed batch (any buffer), or NULL: `*failed` 1 when
 * decompress refused it. */
static PyObject *decompressed(PyObject *decompress, int codec, const uint8_t *p, Py_ssize_t size,
                              int *failed) {
    PyObject *view = PyMemoryView_FromMemory((char *)p + 61, size - 61, PyBUF_READ);
    if (view == NULL)
        return NULL;
    PyObject *raw = PyObject_CallFunction(decompress, "iO", codec, view);
    Py_DECREF(view);
    if (raw == NULL && PyErr_ExceptionMatches(PyExc_Exception) &&
        !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        *failed = 1;
    } else if (raw != NULL && !PyObject_CheckBuffer(raw)) {
        Py_DECREF(raw);
        PyErr_SetString(PyExc_TypeError, "walk: decompress must return a bytes-like object");
        return NULL;
    }
    return raw;
}

/* Rows of the batch at p: 1 taken, 0 left to the full path, -1 Python error. */
static int take_batch(const uint8_t *p, Py_ssize_t position, Py_ssize_t size, PyObject *crc_func,
                      PyObject *decompress, Growing *batches, Growing *records) {
    BatchRow b;
    batch_row(p, position, &b);
    int codec = b.attributes & 0x07;
    if ((b.attributes & 0x20) || codec > 4 || (codec && decompress == Py_None) ||
        b.records_count < 0)
        return 0;
    int match = crc_matches(crc_func, p, size);
    if (match <= 0)
        return match;
    int32_t index = (int32_t)(batches->len / (Py_ssize_t)sizeof(BatchRow));
    int done;
    if (codec == 0) {
        done = section_rows(p + 61, size - 61, b.records_count, &b, index, records);
    } else {
        int failed = 0;
        PyObject *raw = decompressed(decompress, codec, p, size, &failed);
        if (raw == NULL)
            return failed ? 0 : -1;
        Py_buffer section;
        if (PyObject_GetBuffer(raw, &section, PyBUF_SIMPLE) < 0) {
            Py_DECREF(raw);
            return -1;
        }
        done = section_rows(section.buf, section.len, b.records_count, &b, index, records);
        PyBuffer_Release(&section);
        Py_DECREF(raw);
    }
    if (done == -2)
        return -1;
    if (done < 0) /* nothing was committed: records->len moves only on success */
        return 0;
    if (grow(batches, (Py_ssize_t)sizeof(BatchRow)) < 0)
        return -1;
    memcpy(batches->data + batches->len, &b, sizeof(BatchRow));
    batches->len += (Py_ssize_t)sizeof(BatchRow);
    return 1;
}

static PyObject *walk(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, max_records;
    PyObject *crc_func, *decompress, *result = NULL;
    Growing batches = {NULL, 0, 0}, records = {NULL, 0, 0};
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nOOn:walk", &view, &pos, &crc_func, &decompress,
                          &max_records))
        return NULL;
    if (pos < 0) {
        PyErr_SetString(PyExc_ValueError, "walk: negative position");
        goto done;
    }
    const uint8_t *buf = view.buf;
    Py_ssize_t end = view.len;
    while (end - pos >= 61 &&
           (Py_ssize_t)(records.len / (Py_ssize_t)sizeof(RecordRow)) < max_records) {
        const uint8_t *p = buf + pos;
        int32_t length = (int32_t)be(p + 8, 4);
        Py_ssize_t size = (Py_ssize_t)length + 12;
        if (p[16] != 2 || length < 49 || size > end - pos)
            break;
        int taken = take_batch(p, pos, size, crc_func, decompress, &batches, &records);
        if (taken < 0)
            goto done;
        if (taken == 0)
            break;
        pos += size;
    }
    result = Py_BuildValue("(ny#y#)", pos, batches.data ? batches.data : "", batches.len,
                           records.data ? records.data : "", records.len);
done:
    PyMem_Free(batches.data);
    PyMem_Free(records.data);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *hash_key(PyObject *self, PyObject *arg) {
    Py_buffer view;
    (void)self;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    uint64_t h = xxh64(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromLongLong((long long)(int64_t)h);
}

/* {"size": sizeof, field: offset, ...} of one row struct. */
#define OFFSET(dict, type, name)                                                         \
    if (add_offset(dict, #name, (Py_ssize_t)offsetof(type, name)) < 0)                    \
        goto error;

static int add_offset(PyObject *dict, const char *name, Py_ssize_t offset) {
    PyObject *value = PyLong_FromSsize_t(offset);
    int failed = value == NULL || PyDict_SetItemString(dict, name, value) < 0;
    Py_XDECREF(value);
    return failed ? -1 : 0;
}

static PyObject *layout(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    PyObject *batch = PyDict_New(), *record = PyDict_New();
    if (batch == NULL || record == NULL)
        goto error;
    OFFSET(batch, BatchRow, position)
    OFFSET(batch, BatchRow, base_offset)
    OFFSET(batch, BatchRow, base_timestamp)
    OFFSET(batch, BatchRow, max_timestamp)
    OFFSET(batch, BatchRow, producer_id)
    OFFSET(batch, BatchRow, crc)
    OFFSET(batch, BatchRow, size)
    OFFSET(batch, BatchRow, last_offset_delta)
    OFFSET(batch, BatchRow, partition_leader_epoch)
    OFFSET(batch, BatchRow, base_sequence)
    OFFSET(batch, BatchRow, records_count)
    OFFSET(batch, BatchRow, attributes)
    OFFSET(batch, BatchRow, producer_epoch)
    OFFSET(record, RecordRow, offset)
    OFFSET(record, RecordRow, timestamp)
    OFFSET(record, RecordRow, key_hash)
    OFFSET(record, RecordRow, key_size)
    OFFSET(record, RecordRow, value_size)
    OFFSET(record, RecordRow, headers_count)
    OFFSET(record, RecordRow, batch)
    OFFSET(record, RecordRow, attributes)
    return Py_BuildValue("{s:(Nn),s:(Nn)}", "batch", batch, (Py_ssize_t)sizeof(BatchRow),
                         "record", record, (Py_ssize_t)sizeof(RecordRow));
error:
    Py_XDECREF(batch);
    Py_XDECREF(record);
    return NULL;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(buffer, position, crc32c, decompress, max_records) -> (next, batch_rows, record_rows)"},
    {"hash_key", hash_key, METH_O, "hash_key(key: bytes) -> int: XXH64 (seed 0), signed"},
    {"layout", layout, METH_NOARGS, "layout() -> {'batch': ({field: offset}, size), 'record': (...)}"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ccolumns",
                                    "C fast path: plain magic-2 batches into packed column rows.",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ccolumns(void) { return PyModule_Create(&module); }
