#include "tools/su/su_options.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hetpu::su {

Options::Options(int argc, char **argv, const std::set<std::string> &valued, const std::set<std::string> &flags)
{
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0)
            throw UsageError("unexpected argument '" + a + "'");
        std::string name = a.substr(2), value;
        bool inline_value = false;
        if (size_t eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            inline_value = true;
        }
        if (flags.count(name)) {
            if (inline_value)
                throw UsageError("--" + name + " takes no value");
            flags_.insert(name);
            continue;
        }
        if (!valued.count(name))
            throw UsageError("unknown option --" + name);
        if (!inline_value) {
            if (i + 1 >= argc)
                throw UsageError("--" + name + " needs a value");
            value = argv[++i];
        }
        if (values_.count(name))
            throw UsageError("--" + name + " given twice");
        values_[name] = value;
    }
}

std::string Options::get(const std::string &name, const std::string &fallback) const
{
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

std::string Options::required(const std::string &name) const
{
    auto it = values_.find(name);
    if (it == values_.end() || it->second.empty())
        throw UsageError("--" + name + " is required");
    return it->second;
}

double Options::number(const std::string &name, double min) const
{
    const std::string text = required(name);
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
        throw UsageError("--" + name + " '" + text + "' is not a number");
    if (v < min)
    {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", min);
        throw UsageError("--" + name + " must be at least " + buf);
    }
    return v;
}

int Options::count(const std::string &name, int min) const
{
    double v = number(name, min);
    if (v != std::floor(v))
        throw UsageError("--" + name + " must be a whole number");
    return static_cast<int>(v);
}

}  // namespace hetpu::su
