// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/text_table.h"

#include "common/finite_number.h"
#include "common/input_file.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hetpu {

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view line, char delim)
{
    std::vector<std::string_view> fields;
    if (delim == ' ') {
        size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
                ++i;
            if (i >= line.size())
                break;
            size_t j = i;
            while (j < line.size() && line[j] != ' ' && line[j] != '\t')
                ++j;
            fields.push_back(line.substr(i, j - i));
            i = j;
        }
        return fields;
    }
    size_t start = 0;
    for (;;) {
        size_t pos = line.find(delim, start);
        fields.push_back(
            trim(line.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start)));
        if (pos == std::string_view::npos)
            break;
        start = pos + 1;
    }
    return fields;
}

std::string shown(std::string_view field)
{
    std::string s(field.substr(0, 40));
    if (field.size() > 40)
        s += "...";
    return s;
}

// Whether a field is written as a number (sign, then a digit or a point and a digit),
// whatever its value. Header detection asks this rather than parse_number: a first row
// holding 1e-320 or a 70-digit numeral is data, and must not vanish as a "header".
bool looks_numeric(std::string_view field)
{
    field = trim(field);
    size_t i = 0;
    if (i < field.size() && (field[i] == '+' || field[i] == '-'))
        ++i;
    if (i < field.size() && field[i] == '.')
        ++i;
    return i < field.size() && field[i] >= '0' && field[i] <= '9';
}

}  // namespace

bool parse_number(std::string_view field, double &out)
{
    const std::optional<double> v = finite_number(trim(field));
    if (!v)
        return false;
    out = *v;
    return true;
}

bool parse_table(std::string_view text, const std::string &name, const TableFormat &format, Table &out,
                 std::string &error)
{
    Table t;
    char delim = 0;
    bool have_first = false;  // first non-comment line seen (header or data)
    size_t header_line = 0;
    size_t expected = 0;    // fields per row, fixed by the first data row
    size_t first_line = 0;  // line number of that first data row
    size_t line_no = 0;
    size_t pos = 0;
    const size_t skip = format.row_names ? 1 : 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        std::string_view content = trim(line);
        if (content.empty() || content.front() == '#')
            continue;
        if (!delim)
            delim = line.find('\t') != std::string_view::npos  ? '\t'
                    : line.find(',') != std::string_view::npos ? ','
                                                               : ' ';
        std::vector<std::string_view> fields = split(delim == ' ' ? content : line, delim);
        if (!have_first) {
            // First line: a header when any of its value fields is not written as a number.
            have_first = true;
            bool header = false;
            for (size_t i = skip; i < fields.size(); ++i)
                if (!looks_numeric(fields[i]))
                    header = true;
            if (header) {
                for (std::string_view f : fields)
                    t.header.emplace_back(f);
                header_line = line_no;
                continue;
            }
        }
        if (!expected) {
            expected = fields.size();
            first_line = line_no;
            if (expected <= skip) {
                error = name + ":" + std::to_string(line_no) + ": no values on this row: each row needs " +
                        std::string(format.row_names ? "a name followed by numbers" : "at least one number");
                return false;
            }
            // A header may or may not name the row-name column.
            if (format.row_names && t.header.size() == expected)
                t.header.erase(t.header.begin());
            if (!t.header.empty() && t.header.size() != expected - skip) {
                error = name + ":" + std::to_string(header_line) + ": the header has " +
                        std::to_string(t.header.size()) + " column names but line " + std::to_string(line_no) +
                        " has " + std::to_string(expected - skip) + " values: make them match";
                return false;
            }
        } else if (fields.size() != expected) {
            error = name + ":" + std::to_string(line_no) + ": row has " + std::to_string(fields.size()) +
                    " fields but line " + std::to_string(first_line) + " has " + std::to_string(expected) +
                    ": every row needs the same number of columns (check for a missing or extra " +
                    (delim == '\t'  ? std::string("tab")
                     : delim == ' ' ? std::string("blank")
                                    : std::string("','")) +
                    ")";
            return false;
        }
        if (format.row_names)
            t.row_names.emplace_back(fields[0]);
        for (size_t i = skip; i < fields.size(); ++i) {
            double v;
            if (!parse_number(fields[i], v)) {
                error = name + ":" + std::to_string(line_no) + ": column " + std::to_string(i + 1) + ": '" +
                        shown(fields[i]) + "' is not a finite number: fix or remove that value";
                return false;
            }
            t.values.push_back(v);
        }
        ++t.rows;
    }
    if (t.rows == 0) {
        error = name + ": no data rows" + std::string(t.header.empty() ? " (the file is empty)" : " after the header") +
                ": give one row per " + (format.row_names ? "gene" : "point");
        return false;
    }
    t.cols = expected - skip;
    out = std::move(t);
    return true;
}

bool read_file(const std::string &path, std::string &out, std::string &error)
{
    std::string why;
    if (!read_whole_file(path, out, why)) {
        error = "cannot open '" + path + "': " + why;
        return false;
    }
    return true;
}

bool read_table(const std::string &path, const TableFormat &format, Table &out, std::string &error)
{
    std::string text;
    if (!read_file(path, text, error))
        return false;
    return parse_table(text, path, format, out, error);
}

}  // namespace hetpu
