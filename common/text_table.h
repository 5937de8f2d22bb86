// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading numeric tables from delimited text files (CSV, TSV or blank-separated), shared by
// the grn and kmeans apps. Pure C++. Every rejected file yields one message naming the
// file, the line (1-based, as an editor shows it) and how to fix it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hetpu {

struct TableFormat {
    // The first field of every row is a name (a gene name), not a number.
    bool row_names = false;
    // The first non-comment line is a header when any of its (value) fields is not a
    // number; a header is never required.
};

struct Table {
    std::vector<std::string> header;     // column names (empty when the file has none)
    std::vector<std::string> row_names;  // when TableFormat::row_names
    std::vector<double> values;          // row-major, rows x cols
    std::size_t rows = 0, cols = 0;
    double at(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
};

// Strict number: the whole field must parse (after trimming blanks), finite.
bool parse_number(std::string_view field, double &out);

// Parse text already in memory; name is used in messages ("points.csv").
// Delimiter: tab if the first data line has one, else comma if it has one, else runs of
// blanks. Lines that are empty or start with '#' are skipped (line numbers still count).
bool parse_table(std::string_view text, const std::string &name, const TableFormat &format, Table &out,
                 std::string &error);

// Read and parse a file.
bool read_table(const std::string &path, const TableFormat &format, Table &out, std::string &error);

// Read a whole file into memory ("cannot open ..." error otherwise).
bool read_file(const std::string &path, std::string &out, std::string &error);

}  // namespace hetpu
