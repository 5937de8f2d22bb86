// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>

#include "common/input_file.h"

namespace hetpu::ckpt {

std::uint64_t parse_size(const std::string &text)
{
    std::size_t i = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
        ++i;
    if (i == 0) {
        throw Error(-EINVAL, "'" + text + "' does not start with a number");
    }
    std::string unit = text.substr(i);
    while (!unit.empty() && unit.front() == ' ')
        unit.erase(0, 1);
    std::uint64_t mult = 1;
    if (unit.empty() || unit == "B")
        mult = 1;
    else if (unit == "K" || unit == "KiB")
        mult = 1ull << 10;
    else if (unit == "M" || unit == "MiB")
        mult = 1ull << 20;
    else if (unit == "G" || unit == "GiB")
        mult = 1ull << 30;
    else {
        throw Error(-EINVAL, "unknown unit '" + unit + "' in '" + text + "' (use B, KiB, MiB, GiB)");
    }
    // Digit by digit with overflow checks: std::stoull throws on 20-digit numbers, and the
    // product with the unit wrapped silently (17179869184G became 0, "the file system's size").
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < i; ++k) {
        const unsigned d = static_cast<unsigned>(text[k] - '0');
        if (n > (max - d) / 10) {
            throw Error(-EINVAL, "'" + text + "' is too large (at most 2^64-1 bytes)");
        }
        n = n * 10 + d;
    }
    if (n > max / mult) {
        throw Error(-EINVAL, "'" + text + "' is too large (at most 2^64-1 bytes)");
    }
    return n * mult;
}

namespace {

struct Reader {
    const toml::table &root;
    std::string origin;

    std::string where(const toml::node &n) const { return origin + ":" + std::to_string(n.source().begin.line); }
    // The first problem found is the one reported: the user fixes and reruns.
    [[noreturn]] void fail(const std::string &msg) { throw Error(-EINVAL, msg); }
    const toml::node *find(const std::string &table, const std::string &key)
    {
        const toml::node *n = table.empty() ? root.get(key) : nullptr;
        if (!table.empty()) {
            if (const toml::table *t = root[table].as_table())
                n = t->get(key);
        }
        return n;
    }
    std::string name(const std::string &table, const std::string &key)
    {
        return table.empty() ? key : table + "." + key;
    }
    void boolean(const std::string &table, const std::string &key, bool *out)
    {
        if (const toml::node *n = find(table, key)) {
            if (auto v = n->value<bool>())
                *out = *v;
            else
                fail(where(*n) + ": " + name(table, key) + " must be true or false");
        }
    }
    void integer(const std::string &table, const std::string &key, int lo, int hi, int *out)
    {
        if (const toml::node *n = find(table, key)) {
            // as_integer, not value<int64_t>: the latter converts a float, with undefined
            // behaviour for one out of range (1e30).
            const toml::value<int64_t> *v = n->as_integer();
            if (!v || v->get() < lo || v->get() > hi)
                fail(where(*n) + ": " + name(table, key) + " must be an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
            else
                *out = static_cast<int>(v->get());
        }
    }
    void size(const std::string &table, const std::string &key, std::uint64_t *out)
    {
        if (const toml::node *n = find(table, key)) {
            if (const toml::value<int64_t> *v = n->as_integer()) {  // as_integer: see integer()
                if (v->get() < 0)
                    fail(where(*n) + ": " + name(table, key) + " must not be negative");
                else
                    *out = static_cast<std::uint64_t>(v->get());
            } else if (auto s = n->value<std::string>()) {
                try {
                    *out = parse_size(*s);
                } catch (const Error &e) {
                    fail(where(*n) + ": " + name(table, key) + ": " + e.what());
                }
            } else {
                fail(where(*n) + ": " + name(table, key) + " must be a size like 4096 or \"64MiB\"");
            }
        }
    }
    // Seconds: an integer or a float in [lo, hi].
    void seconds(const std::string &table, const std::string &key, double lo, double hi, double *out)
    {
        if (const toml::node *n = find(table, key)) {
            std::optional<double> v;
            if (const toml::value<int64_t> *i = n->as_integer())
                v = static_cast<double>(i->get());
            else if (const toml::value<double> *f = n->as_floating_point())
                v = f->get();
            if (!v || !(*v >= lo && *v <= hi))
                fail(where(*n) + ": " + name(table, key) + " must be a number of seconds in [" + format_number(lo) +
                     ", " + format_number(hi) + "]");
            *out = *v;
        }
    }
    static std::string format_number(double x)
    {
        std::ostringstream o;
        o << x;
        return o.str();
    }
    void string(const std::string &table, const std::string &key, std::string *out)
    {
        if (const toml::node *n = find(table, key)) {
            if (auto v = n->value<std::string>())
                *out = *v;
            else
                fail(where(*n) + ": " + name(table, key) + " must be a string");
        }
    }
};

const char *const kTopKeys[] = {
    "versions_to_keep", "checksums", "flush_threads", "eviction", "prefetch", "host", "local", "remote", "device"};
const char *const kHostKeys[] = {"size", "incremental_init"};
const char *const kDirKeys[] = {"path", "capacity", "drop_page_cache"};
const char *const kRemoteKeys[] = {"path", "capacity", "drop_page_cache", "bandwidth"};
const char *const kDeviceKeys[] = {"size", "chunk", "slot", "peer_schedule", "headroom", "regrow_after"};

template <std::size_t N> bool known(const std::string &k, const char *const (&keys)[N])
{
    for (const char *x : keys)
        if (k == x)
            return true;
    return false;
}

}  // namespace

namespace {

// [device] size = "64MiB" (bytes per device) or "25%" (of each device's memory as StarPU
// reports it); chunk, slot: allocation units; peer_schedule: "flow" | "greedy" | "local".
void device_section(Reader &r, DeviceTierConfig *d)
{
    if (const toml::node *n = r.find("device", "size")) {
        const auto text = n->value<std::string>();
        if (text && !text->empty() && text->back() == '%') {
            char *end = nullptr;
            const std::string num = text->substr(0, text->size() - 1);
            const double pct = std::strtod(num.c_str(), &end);
            if (num.empty() || end != num.c_str() + num.size() || !(pct >= 0 && pct <= 100))
                r.fail(r.where(*n) + ": device.size = \"" + *text +
                       "\": a percentage must be a number in [0, 100] followed by %, like \"25%\"");
            d->fraction = pct / 100.0;
            d->bytes = 0;
        } else {
            r.size("device", "size", &d->bytes);
            d->fraction = 0;
        }
    }
    r.size("device", "chunk", &d->chunk_bytes);
    r.size("device", "slot", &d->slot_bytes);
    const toml::node *chunk = r.find("device", "chunk");
    if (d->slot_bytes == 0 || d->chunk_bytes == 0 || d->chunk_bytes % d->slot_bytes != 0)
        r.fail((chunk ? r.where(*chunk) : r.origin) + ": device.chunk (" + std::to_string(d->chunk_bytes) +
               " bytes) must be a non-zero multiple of device.slot (" + std::to_string(d->slot_bytes) + " bytes)");
    // A cache smaller than one chunk is one chunk of its size: an explicit larger chunk would
    // be ignored without a word.
    if (chunk && d->fraction == 0 && d->bytes > 0 && d->chunk_bytes > d->bytes)
        r.fail(r.where(*chunk) + ": device.chunk (" + std::to_string(d->chunk_bytes) +
               " bytes) is larger than device.size (" + std::to_string(d->bytes) +
               " bytes): the cache grows by whole chunks; set chunk to at most the size");
    d->headroom_bytes = d->chunk_bytes;
    r.size("device", "headroom", &d->headroom_bytes);
    r.seconds("device", "regrow_after", 0, 3600, &d->regrow_after_s);
    std::string policy = "flow";
    r.string("device", "peer_schedule", &policy);
    if (policy == "flow")
        d->peer_policy = PeerPolicy::Flow;
    else if (policy == "greedy")
        d->peer_policy = PeerPolicy::Greedy;
    else if (policy == "local")
        d->peer_policy = PeerPolicy::Local;
    else
        r.fail(r.where(*r.find("device", "peer_schedule")) + ": device.peer_schedule = \"" + policy +
               "\" is not \"flow\", \"greedy\" or \"local\"");
}

// A tier table's scalar keys, as written, for its tier to check.
TierSettings tier_table(Reader &r, const std::string &name, const toml::table &table)
{
    TierSettings out;
    for (const auto &[k, v] : table) {
        const std::string key(k.str());
        TierSetting s;
        s.where = r.where(v);
        if (const auto text = v.value_exact<std::string>()) {
            s.text = *text;
            s.is_string = true;
        } else if (const auto i = v.value_exact<int64_t>()) {
            s.text = std::to_string(*i);
        } else if (const auto d = v.value_exact<double>()) {
            std::ostringstream o;
            o.precision(17);
            o << *d;
            s.text = o.str();
        } else if (const auto b = v.value_exact<bool>()) {
            s.text = *b ? "true" : "false";
        } else {
            r.fail(s.where + ": " + name + "." + key + " must be a string, a number or true/false");
        }
        out.emplace(key, std::move(s));
    }
    return out;
}

EngineConfig parse_config_tree(const std::string &toml_text, const std::string &origin,
                               const std::vector<std::string> &tables)
{
    toml::table root;
    try {
        root = toml::parse(toml_text, origin);
    } catch (const toml::parse_error &e) {
        std::ostringstream o;
        o << origin << ":" << e.source().begin.line << ": TOML syntax error: " << e.description();
        throw Error(-EINVAL, o.str());
    }
    Reader r{root, origin};
    EngineConfig c;
    // Unknown keys are errors: a typo must not silently fall back to a default.
    for (const auto &[k, v] : root) {
        std::string key(k.str());
        const bool tier_table_name = std::find(tables.begin(), tables.end(), key) != tables.end();
        if (tier_table_name && !v.is_table())
            r.fail(r.where(v) + ": '" + key + "' must be a table ([" + key + "])");
        else if (tier_table_name)
            c.tier_settings[key] = tier_table(r, key, *v.as_table());
        else if (!known(key, kTopKeys))
            r.fail(r.where(v) + ": unknown key '" + key + "'");
        else if ((key == "host" || key == "local" || key == "remote" || key == "device") && !v.is_table())
            r.fail(r.where(v) + ": '" + key + "' must be a table ([" + key + "])");
        else if (v.is_table())
            for (const auto &[sk, sv] : *v.as_table()) {
                std::string sub(sk.str());
                bool ok = key == "host"     ? known(sub, kHostKeys)
                          : key == "device" ? known(sub, kDeviceKeys)
                          : key == "remote" ? known(sub, kRemoteKeys)
                                            : known(sub, kDirKeys);
                if (!ok)
                    r.fail(r.where(sv) + ": unknown key '" + key + "." + sub + "'");
            }
    }
    r.integer("", "versions_to_keep", 0, 1 << 30, &c.versions_to_keep);
    r.boolean("", "checksums", &c.checksums);
    r.integer("", "flush_threads", 1, 64, &c.flush_threads);
    r.boolean("", "prefetch", &c.prefetch);
    std::string eviction = "score";
    r.string("", "eviction", &eviction);
    if (eviction == "fifo")
        c.eviction = EvictionPolicy::Fifo;
    else if (eviction == "score")
        c.eviction = EvictionPolicy::Score;
    else
        r.fail(origin + ": eviction = \"" + eviction + "\" is not \"score\" or \"fifo\"");
    r.size("host", "size", &c.host_bytes);
    r.boolean("host", "incremental_init", &c.host_incremental_init);
    r.string("local", "path", &c.local_dir);
    r.size("local", "capacity", &c.local_capacity);
    r.boolean("local", "drop_page_cache", &c.drop_page_cache);
    r.string("remote", "path", &c.remote_dir);
    r.size("remote", "capacity", &c.remote_capacity);
    r.size("remote", "bandwidth", &c.remote_bandwidth);
    device_section(r, &c.device);
    if (c.local_dir.empty())
        r.fail(origin + ": [local] path is required (the node-local checkpoint directory)");
    return c;
}

}  // namespace

// Only ckpt::Error leaves: the C API maps it to -errno, and an exception of toml++ or the
// standard library (a bad_alloc on a huge file, say) still names the config.
EngineConfig parse_config(const std::string &toml_text, const std::string &origin,
                          const std::vector<std::string> &tables)
{
    try {
        return parse_config_tree(toml_text, origin, tables);
    } catch (const Error &) {
        throw;
    } catch (const std::exception &e) {
        throw Error(-EINVAL, origin + ": cannot read the checkpoint config: " + e.what());
    }
}

EngineConfig load_config_file(const std::string &path)
{
    std::string text, why;
    if (!read_whole_file(path, text, why)) {
        const int err = errno ? errno : EINVAL;
        throw Error(-err, "cannot read checkpoint config '" + path + "': " + why);
    }
    return parse_config(text, path);
}

}  // namespace hetpu::ckpt
