/*
 * _cscan: C decoder of a magic-2 records section (the fast path of records.scan).
 *
 * Theory of operation
 * -------------------
 * decode_section(buffer, start, end, count) decodes `count` records laid out
 * back to back in buffer[start:end] (an uncompressed batch's records section,
 * or decompressed bytes) and returns a tuple of lethe_formats.model.Record.
 * It is the twin of _pyscan.decode_section: the same checks in the same order,
 * the same messages and field names. On bad input it raises
 * _cscan.DecodeError(kind, message, position, field) with `kind` one of
 * "invalid", "varint", "corrupt" and `position` relative to `start`; scan.py
 * turns that into InvalidRecordError / VarintError / CorruptRecordError with
 * an absolute position. The classes follow the Construct schema: a negative
 * record length is corruption, an over-long varint a VarintError, any other
 * fault (a section shorter than its count too) InvalidRecordError.
 * Any negative key/value length reads as null, as Kafka reads it.
 *
 * One record (DefaultRecord.java):
 *
 *     length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
 *     | keyLength varint (-1 null) | key | valueLength varint (-1 null) | value
 *     | headersCount varint (>= 0)
 *     | { headerKeyLength varint (>= 0) | key | headerValueLength varint (-1 null) | value }*
 *
 * Every read is bounded: fields by the end of the record body, the body by
 * the end of the section; varints stop at 5 bytes (varlongs at 10) like
 * Kafka's ByteUtils, so no input can loop or allocate a claimed length.
 * The result tuple is sized min(count, bytes / 7): a record needs at least
 * 7 bytes, so a larger claimed count fails before the tuple would overflow.
 *
 * scan_v2(...) is the shallow counterpart: it walks plain, complete magic-2
 * batches, builds BatchHeader and ScannedEntry values and checks each CRC
 * with the crc32c package's function, and stops at the first entry needing
 * the full rules (legacy, torn, implausible), which scan.py then applies.
 * That takes the per-batch cost from microseconds to a few hundred ns.
 *
 * Objects: Record, Header, BatchHeader and ScannedEntry are frozen slots
 * dataclasses. Their instances are created with the type's tp_alloc and their
 * __slots__ filled through the member descriptors' offsets, looked up once by
 * init(); this is what the dataclass __init__ does via object.__setattr__,
 * minus the call overhead.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stdio.h>

#define MIN_RECORD_SIZE 7
#define FIELD_CAP 96
#define SECTION "records section"

static PyTypeObject *record_type = NULL;
static PyTypeObject *header_type = NULL;
static PyObject *decode_error = NULL;
static PyObject *empty_tuple = NULL;

static const char *const record_fields[] = {
    "attributes", "timestamp_delta", "offset_delta", "key", "value", "headers"};
static Py_ssize_t record_offsets[6];
static const char *const header_fields[] = {"key", "value"};
static Py_ssize_t header_offsets[2];

enum { R_ATTRIBUTES, R_TIMESTAMP_DELTA, R_OFFSET_DELTA, R_KEY, R_VALUE, R_HEADERS };

/* Where a field lives: record index and a suffix such as ".key" or ".headers[2].value". */
typedef struct {
    Py_ssize_t index;
    const char *suffix;
    Py_ssize_t header; /* -1 unless the suffix names a header field */
} Where;

typedef struct {
    const uint8_t *buf;
    Py_ssize_t size;
} Section;

static void field_name(const Where *w, const char *extra, char *out) {
    if (w->header >= 0)
        snprintf(out, FIELD_CAP, "records[%zd].headers[%zd]%s%s", w->index, w->header, w->suffix,
                 extra);
    else
        snprintf(out, FIELD_CAP, "records[%zd]%s%s", w->index, w->suffix, extra);
}

/* Raise DecodeError(kind, message, position, field); always returns -1. */
static int fail(const char *kind, PyObject *message, Py_ssize_t position, const char *field) {
    if (message == NULL)
        return -1;
    PyObject *args = Py_BuildValue("(sNns)", kind, message, position, field);
    if (args != NULL) {
        PyErr_SetObject(decode_error, args);
        Py_DECREF(args);
    }
    return -1;
}

/* Zig-zag varint ending before `limit`; max_bytes 5 (bits 32) or 10 (bits 64). */
static int read_varint(const Section *s, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes,
                       int bits, const Where *w, const char *extra, const char *what,
                       int64_t *out) {
    Py_ssize_t start = *pos;
    uint64_t raw = 0;
    char field[FIELD_CAP];
    if (start < limit && s->buf[start] < 0x80) { /* one-byte fast path */
        uint64_t b = s->buf[start];
        *out = (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
        *pos = start + 1;
        return 0;
    }
    for (int i = 0; i < max_bytes; i++) {
        if (start + i >= limit) {
            field_name(w, extra, field);
            return fail("invalid",
                        PyUnicode_FromFormat("%s extends beyond the end of the %s", field, what),
                        start, field);
        }
        uint64_t b = s->buf[start + i];
        int shift = 7 * i;
        uint64_t group = b & 0x7F;
        int overflow = (shift + 7 > 64) && (group >> (64 - shift)) != 0;
        raw |= group << shift;
        if (!(b & 0x80)) {
            if (overflow || (bits < 64 && (raw >> bits) != 0)) {
                field_name(w, extra, field);
                return fail("varint",
                            PyUnicode_FromFormat("%s does not fit in %d bits", field, bits),
                            start, field);
            }
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            *pos = start + i + 1;
            return 0;
        }
    }
    field_name(w, extra, field);
    return fail("varint",
                PyUnicode_FromFormat("%s is longer than %d bytes", field, max_bytes), start,
                field);
}

/* A length-prefixed byte string inside a record body ending at `limit`; with `out`
 * NULL it is checked and skipped, not built (section_stats). */
static int read_bytes(const Section *s, Py_ssize_t *pos, Py_ssize_t limit, const Where *w,
                      int allow_null, PyObject **out, int *was_null) {
    Py_ssize_t start = *pos;
    int64_t size;
    char field[FIELD_CAP];
    if (read_varint(s, pos, limit, 5, 32, w, "Length", "record", &size) < 0)
        return -1;
    if (was_null != NULL)
        *was_null = size < 0;
    if (size < 0) {
        if (allow_null) {
            if (out != NULL)
                *out = Py_NewRef(Py_None);
            return 0;
        }
        field_name(w, "Length", field);
        return fail("invalid", PyUnicode_FromFormat("invalid %s %lld", field, (long long)size),
                    start, field);
    }
    if (size > limit - *pos) {
        field_name(w, "", field);
        return fail("invalid",
                    PyUnicode_FromFormat("%s of %lld bytes extends beyond the end of the record",
                                         field, (long long)size),
                    start, field);
    }
    if (out != NULL) {
        *out = PyBytes_FromStringAndSize((const char *)s->buf + *pos, (Py_ssize_t)size);
        if (*out == NULL)
            return -1;
    }
    *pos += (Py_ssize_t)size;
    return 0;
}

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

static PyObject *new_header(PyObject *key, PyObject *value) {
    PyObject *h = header_type->tp_alloc(header_type, 0);
    if (h == NULL) {
        Py_DECREF(key);
        Py_DECREF(value);
        return NULL;
    }
    SLOT(h, header_offsets[0]) = key;
    SLOT(h, header_offsets[1]) = value;
    return h;
}

static int read_headers(const Section *s, Py_ssize_t *pos, Py_ssize_t limit, Py_ssize_t index,
                        PyObject **out) {
    Where w = {index, ".headersCount", -1};
    Py_ssize_t start = *pos;
    int64_t count;
    char field[FIELD_CAP];
    if (read_varint(s, pos, limit, 5, 32, &w, "", "record", &count) < 0)
        return -1;
    if (count < 0) {
        field_name(&w, "", field);
        return fail("invalid", PyUnicode_FromFormat("invalid %s %lld", field, (long long)count),
                    start, field);
    }
    if (out == NULL) { /* walk only */
        for (int64_t j = 0; j < count; j++) {
            Where kw = {index, ".key", (Py_ssize_t)j}, vw = {index, ".value", (Py_ssize_t)j};
            if (read_bytes(s, pos, limit, &kw, 0, NULL, NULL) < 0 ||
                read_bytes(s, pos, limit, &vw, 1, NULL, NULL) < 0)
                return -1;
        }
        return 0;
    }
    if (count == 0) {
        Py_INCREF(empty_tuple);
        *out = empty_tuple;
        return 0;
    }
    /* A header needs at least 2 bytes: never size the tuple by the claimed count alone. */
    Py_ssize_t room = (limit - *pos) / 2;
    PyObject *headers = PyTuple_New(count < room ? (Py_ssize_t)count : room);
    if (headers == NULL)
        return -1;
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *key = NULL, *value = NULL, *h;
        Where kw = {index, ".key", j}, vw = {index, ".value", j};
        if (read_bytes(s, pos, limit, &kw, 0, &key, NULL) < 0 ||
            read_bytes(s, pos, limit, &vw, 1, &value, NULL) < 0) {
            Py_XDECREF(key);
            Py_DECREF(headers);
            return -1;
        }
        h = new_header(key, value);
        if (h == NULL) {
            Py_DECREF(headers);
            return -1;
        }
        PyTuple_SET_ITEM(headers, j, h);
    }
    *out = headers;
    return 0;
}

/* One record's fields; key, value and headers stay NULL when not built. */
typedef struct {
    int8_t attributes;
    int64_t ts_delta, off_delta;
    int key_null;
    PyObject *key, *value, *headers;
} Fields;

/* Check one record and move `pos` past it; `build`: create its key, value and headers. */
static int parse_record(const Section *s, Py_ssize_t *pos, Py_ssize_t index, int build,
                        Fields *r) {
    Where w = {index, ".length", -1};
    Py_ssize_t start = *pos, body, limit, p;
    int64_t length;
    char field[FIELD_CAP];
    if (read_varint(s, pos, s->size, 5, 32, &w, "", SECTION, &length) < 0)
        return -1;
    body = *pos;
    if (length < 0) {
        field_name(&w, "", field);
        return fail("corrupt",
                    PyUnicode_FromFormat("%s %lld is negative", field, (long long)length), start,
                    field);
    }
    if (length > s->size - body) {
        field_name(&w, "", field);
        return fail("invalid",
                    PyUnicode_FromFormat("%s %lld extends beyond the end of the " SECTION, field,
                                         (long long)length),
                    start, field);
    }
    limit = body + (Py_ssize_t)length;
    if (body >= limit) {
        Where aw = {index, ".attributes", -1};
        field_name(&aw, "", field);
        return fail("invalid",
                    PyUnicode_FromFormat("%s extends beyond the end of the record", field), body,
                    field);
    }
    r->attributes = (int8_t)s->buf[body]; /* signed, as Kafka reads it */
    p = body + 1;
    Where tw = {index, ".timestampDelta", -1}, ow = {index, ".offsetDelta", -1};
    Where kw = {index, ".key", -1}, vw = {index, ".value", -1};
    if (read_varint(s, &p, limit, 10, 64, &tw, "", "record", &r->ts_delta) < 0 ||
        read_varint(s, &p, limit, 5, 32, &ow, "", "record", &r->off_delta) < 0 ||
        read_bytes(s, &p, limit, &kw, 1, build ? &r->key : NULL, &r->key_null) < 0 ||
        read_bytes(s, &p, limit, &vw, 1, build ? &r->value : NULL, NULL) < 0 ||
        read_headers(s, &p, limit, index, build ? &r->headers : NULL) < 0)
        return -1;
    if (p != limit) {
        field_name(&w, "", field);
        return fail("invalid",
                    PyUnicode_FromFormat("%s %lld but the fields end %zd bytes earlier", field,
                                         (long long)length, limit - p),
                    p, field);
    }
    *pos = limit;
    return 0;
}

static PyObject *read_record(const Section *s, Py_ssize_t *pos, Py_ssize_t index) {
    Fields r = {0, 0, 0, 0, NULL, NULL, NULL};
    PyObject *rec;
    if (parse_record(s, pos, index, 1, &r) < 0)
        goto error;
    rec = record_type->tp_alloc(record_type, 0);
    if (rec == NULL)
        goto error;
    SLOT(rec, record_offsets[R_KEY]) = r.key;
    SLOT(rec, record_offsets[R_VALUE]) = r.value;
    SLOT(rec, record_offsets[R_HEADERS]) = r.headers;
    SLOT(rec, record_offsets[R_ATTRIBUTES]) = PyLong_FromLong(r.attributes);
    SLOT(rec, record_offsets[R_TIMESTAMP_DELTA]) = PyLong_FromLongLong(r.ts_delta);
    SLOT(rec, record_offsets[R_OFFSET_DELTA]) = PyLong_FromLongLong(r.off_delta);
    if (SLOT(rec, record_offsets[R_TIMESTAMP_DELTA]) == NULL ||
        SLOT(rec, record_offsets[R_OFFSET_DELTA]) == NULL) {
        Py_DECREF(rec);
        return NULL;
    }
    return rec;
error:
    Py_XDECREF(r.key);
    Py_XDECREF(r.value);
    Py_XDECREF(r.headers);
    return NULL;
}

/* The section must end with its last record. */
static int all_used(const Section *s, Py_ssize_t pos, Py_ssize_t count) {
    if (pos == s->size)
        return 0;
    return fail("invalid",
                PyUnicode_FromFormat("%zd bytes remain after the last of %zd records",
                                     s->size - pos, count),
                pos, "records");
}

/* The (buffer, start, end, count) arguments as a Section of buffer[start:end]. */
static int section_args(PyObject *args, const char *format, const char *name, Py_buffer *view,
                        Section *s, Py_ssize_t *count) {
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, format, view, &start, &end, count))
        return -1;
    if (start < 0 || end < start || end > view->len || *count < 0) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "%s: bad start, end or count", name);
        return -1;
    }
    s->buf = (const uint8_t *)view->buf + start;
    s->size = end - start;
    return 0;
}

static PyObject *decode_section(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count, pos = 0, filled = 0;
    Section s;
    (void)self;
    if (record_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_cscan.init() was not called");
        return NULL;
    }
    if (section_args(args, "y*nnn:decode_section", "decode_section", &view, &s, &count) < 0)
        return NULL;
    Py_ssize_t room = s.size / MIN_RECORD_SIZE;
    PyObject *records = PyTuple_New(count < room ? count : room);
    if (records == NULL)
        goto error;
    for (; filled < count; filled++) {
        PyObject *rec = read_record(&s, &pos, filled);
        if (rec == NULL)
            goto error;
        PyTuple_SET_ITEM(records, filled, rec);
    }
    if (all_used(&s, pos, count) < 0)
        goto error;
    PyBuffer_Release(&view);
    return records;
error:
    Py_XDECREF(records);
    PyBuffer_Release(&view);
    return NULL;
}

/* section_stats(buffer, start, end, count) -> (records, min ts delta, max ts delta,
 * null keys, offset deltas in order): decode_section's checks, in its order and with its
 * errors, without building a Record (what a broker's validator needs of each record). */
static PyObject *section_stats(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count, pos = 0, index = 0, null_keys = 0;
    int64_t lo = 0, hi = 0;
    int in_order = 1;
    Section s;
    (void)self;
    if (section_args(args, "y*nnn:section_stats", "section_stats", &view, &s, &count) < 0)
        return NULL;
    for (; index < count; index++) {
        Fields r = {0, 0, 0, 0, NULL, NULL, NULL};
        if (parse_record(&s, &pos, index, 0, &r) < 0)
            goto error;
        if (index == 0 || r.ts_delta < lo)
            lo = r.ts_delta;
        if (index == 0 || r.ts_delta > hi)
            hi = r.ts_delta;
        null_keys += r.key_null;
        in_order &= r.off_delta == (int64_t)index;
    }
    if (all_used(&s, pos, count) < 0)
        goto error;
    PyBuffer_Release(&view);
    return Py_BuildValue("(nLLnO)", count, (long long)lo, (long long)hi, null_keys,
                         in_order ? Py_True : Py_False);
error:
    PyBuffer_Release(&view);
    return NULL;
}

/* Offsets of the named __slots__ members of `type`, checked to be object slots. */
static int slot_offsets(PyTypeObject *type, const char *const *names, Py_ssize_t *offsets,
                        int n) {
    if (type->tp_dictoffset != 0 || type->tp_itemsize != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a slots class", type->tp_name);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *descr = PyDict_GetItemString(type->tp_dict, names[i]);
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, names[i]);
            return -1;
        }
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != T_OBJECT_EX || member->offset <= 0 ||
            member->offset + (Py_ssize_t)sizeof(PyObject *) > type->tp_basicsize) {
            PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name,
                         names[i]);
            return -1;
        }
        offsets[i] = member->offset;
    }
    return 0;
}

/* ---- shallow scan of well-formed magic-2 batches ---------------------------------
 *
 * scan_v2(buffer, position, verify, crc32c, max_size, max_entries) -> (list, next)
 * walks complete magic-2 batches from `position` and returns ScannedEntry
 * values for them plus the position where it stopped. It stops (without an
 * error) at the first entry that is not a complete, plausible v2 batch:
 * fewer than 61 bytes left, batchLength < 49, magic != 2, a batch beyond the
 * data or above max_size (-1: no limit). scan.py then examines that entry with
 * the full rules, so every error is decided in one place. `crc32c` is the
 * crc32c package's function, called on a memoryview of [21, end).
 */

static PyTypeObject *batch_header_type = NULL;
static PyTypeObject *entry_type = NULL;
static const char *const batch_header_fields[] = {
    "base_offset",   "batch_length",    "partition_leader_epoch", "magic",
    "crc",           "attributes",      "last_offset_delta",      "base_timestamp",
    "max_timestamp", "producer_id",     "producer_epoch",         "base_sequence",
    "records_count"};
static Py_ssize_t batch_header_offsets[13];
static const char *const entry_fields[] = {"position", "header", "crc_valid"};
static Py_ssize_t entry_offsets[3];

static uint64_t be(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static PyObject *new_batch_header(const uint8_t *p) {
    long long values[13] = {
        (int64_t)be(p, 8),        (int32_t)be(p + 8, 4),  (int32_t)be(p + 12, 4),
        (int8_t)p[16],            (long long)be(p + 17, 4), (int16_t)be(p + 21, 2),
        (int32_t)be(p + 23, 4),   (int64_t)be(p + 27, 8), (int64_t)be(p + 35, 8),
        (int64_t)be(p + 43, 8),   (int16_t)be(p + 51, 2), (int32_t)be(p + 53, 4),
        (int32_t)be(p + 57, 4)};
    PyObject *h = batch_header_type->tp_alloc(batch_header_type, 0);
    if (h == NULL)
        return NULL;
    for (int i = 0; i < 13; i++) {
        PyObject *v = PyLong_FromLongLong(values[i]);
        if (v == NULL) {
            Py_DECREF(h);
            return NULL;
        }
        SLOT(h, batch_header_offsets[i]) = v;
    }
    return h;
}

/* Py_True / Py_False for the CRC of the batch at p (size bytes), NULL on error. */
static PyObject *check_crc(PyObject *crc_func, const uint8_t *p, Py_ssize_t size) {
    PyObject *view = PyMemoryView_FromMemory((char *)p + 21, size - 21, PyBUF_READ);
    if (view == NULL)
        return NULL;
    PyObject *computed = PyObject_CallOneArg(crc_func, view);
    Py_DECREF(view);
    if (computed == NULL)
        return NULL;
    unsigned long long value = PyLong_AsUnsignedLongLong(computed);
    Py_DECREF(computed);
    if (value == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    return Py_NewRef(value == be(p + 17, 4) ? Py_True : Py_False);
}

static PyObject *new_entry(Py_ssize_t position, PyObject *header, PyObject *valid) {
    PyObject *e = entry_type->tp_alloc(entry_type, 0);
    PyObject *pos = PyLong_FromSsize_t(position);
    if (e == NULL || pos == NULL) {
        Py_XDECREF(e);
        Py_XDECREF(pos);
        Py_DECREF(header);
        Py_DECREF(valid);
        return NULL;
    }
    SLOT(e, entry_offsets[0]) = pos;
    SLOT(e, entry_offsets[1]) = header;
    SLOT(e, entry_offsets[2]) = valid;
    return e;
}

static PyObject *scan_v2(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, max_size, max_entries;
    int verify;
    PyObject *crc_func, *entries = NULL;
    (void)self;
    if (entry_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_cscan.init() was not called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*npOnn:scan_v2", &view, &pos, &verify, &crc_func, &max_size,
                          &max_entries))
        return NULL;
    const uint8_t *buf = view.buf;
    Py_ssize_t end = view.len;
    if (pos < 0 || (entries = PyList_New(0)) == NULL) {
        if (pos < 0)
            PyErr_SetString(PyExc_ValueError, "scan_v2: negative position");
        goto error;
    }
    while (PyList_GET_SIZE(entries) < max_entries && end - pos >= 61) {
        const uint8_t *p = buf + pos;
        int32_t length = (int32_t)be(p + 8, 4);
        Py_ssize_t size = (Py_ssize_t)length + 12;
        if (p[16] != 2 || length < 49 || size > end - pos || (max_size >= 0 && size > max_size))
            break;
        PyObject *valid = verify ? check_crc(crc_func, p, size) : Py_NewRef(Py_None);
        if (valid == NULL)
            goto error;
        PyObject *header = new_batch_header(p);
        if (header == NULL) {
            Py_DECREF(valid);
            goto error;
        }
        PyObject *entry = new_entry(pos, header, valid);
        if (entry == NULL || PyList_Append(entries, entry) < 0) {
            Py_XDECREF(entry);
            goto error;
        }
        Py_DECREF(entry);
        pos += size;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(Nn)", entries, pos);
error:
    Py_XDECREF(entries);
    PyBuffer_Release(&view);
    return NULL;
}

static PyObject *init(PyObject *self, PyObject *args) {
    PyTypeObject *rec, *hdr, *batch, *entry;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!O!O!:init", &PyType_Type, &rec, &PyType_Type, &hdr,
                          &PyType_Type, &batch, &PyType_Type, &entry))
        return NULL;
    if (slot_offsets(rec, record_fields, record_offsets, 6) < 0 ||
        slot_offsets(hdr, header_fields, header_offsets, 2) < 0 ||
        slot_offsets(batch, batch_header_fields, batch_header_offsets, 13) < 0 ||
        slot_offsets(entry, entry_fields, entry_offsets, 3) < 0)
        return NULL;
    Py_XSETREF(record_type, (PyTypeObject *)Py_NewRef(rec));
    Py_XSETREF(header_type, (PyTypeObject *)Py_NewRef(hdr));
    Py_XSETREF(batch_header_type, (PyTypeObject *)Py_NewRef(batch));
    Py_XSETREF(entry_type, (PyTypeObject *)Py_NewRef(entry));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", init, METH_VARARGS,
     "init(Record, Header, BatchHeader, ScannedEntry): learn the slot layout of the types."},
    {"decode_section", decode_section, METH_VARARGS,
     "decode_section(buffer, start, end, count) -> tuple[Record, ...]"},
    {"section_stats", section_stats, METH_VARARGS,
     "section_stats(buffer, start, end, count) -> (count, min_ts_delta, max_ts_delta, "
     "null_keys, offset_deltas_in_order)"},
    {"scan_v2", scan_v2, METH_VARARGS,
     "scan_v2(buffer, position, verify, crc32c, max_size, max_entries) -> (entries, next)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cscan",
                                    "C fast path: magic-2 records sections and batch headers.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__cscan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    decode_error = PyErr_NewException("lethe_formats.records._cscan.DecodeError", NULL, NULL);
    empty_tuple = PyTuple_New(0);
    if (decode_error == NULL || empty_tuple == NULL ||
        PyModule_AddObjectRef(m, "DecodeError", decode_error) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
