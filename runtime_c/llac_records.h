/* Bulk conversion of trace records for llac's reader (llac/records.py), built as the cffi
 * extension `llac._records` by runtime_c/build_records.py. */
#include <stddef.h>

long long llac_parse_records(const char *buf, size_t len, long long nlines, int named, int ncols, double *out);
