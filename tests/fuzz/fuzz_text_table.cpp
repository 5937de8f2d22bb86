// SPDX-License-Identifier: LGPL-2.1-or-later
// libFuzzer harness: the apps' delimited numeric tables (kmeans points, grn expression
// matrices), with and without row names. The parser reports through its return value only.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/text_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    for (bool row_names : {false, true}) {
        hetpu::TableFormat format;
        format.row_names = row_names;
        hetpu::Table table;
        std::string error;
        if (hetpu::parse_table(text, "fuzz.csv", format, table, error) &&
            table.values.size() != table.rows * table.cols)
            __builtin_trap();  // a table whose shape does not match its values
    }
    return 0;
}
