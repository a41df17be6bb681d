package config

import (
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/resp"
)

// A spec is the type of a Redis 7.0 directive as its config table gives
// it (specs_gen.go): how CONFIG SET and the config file validate a value,
// and how CONFIG GET prints it back (memory units in bytes, booleans and
// enums in their canonical spelling).
type spec struct {
	name  string
	kind  specKind
	flags specFlag
	num   numFlag
	lo    int64
	hi    uint64
	enum  []string
}

type specKind uint8

const (
	kindBool specKind = iota
	kindNumber
	kindEnum
	kindString
	kindSpecial
)

type specFlag uint8

const (
	immutableFlag specFlag = 1 << iota
	protectedFlag
	multiFlag
)

type numFlag uint8

const (
	numMemory numFlag = 1 << iota
	numPercent
	numOctal
	numUnsigned
)

var specs = func() map[string]*spec {
	m := make(map[string]*spec, len(specTable))
	for i := range specTable {
		m[specTable[i].name] = &specTable[i]
	}
	return m
}()

// Effective are directives without a Config field that the server applies
// itself (it reads them with Get): no "has no effect" warning for them.
var Effective = map[string]bool{
	"maxmemory-policy": true, "lfu-log-factor": true, "lfu-decay-time": true,
	"hash-max-listpack-entries": true, "hash-max-listpack-value": true, "set-max-intset-entries": true,
	"zset-max-listpack-entries": true, "zset-max-listpack-value": true, "list-max-listpack-size": true,
	"slowlog-log-slower-than": true, "slowlog-max-len": true, "latency-monitor-threshold": true,
	"latency-tracking": true,
	// RDB persistence (server/persist.go)
	"dbfilename": true, "rdbcompression": true, "rdbchecksum": true, "stop-writes-on-bgsave-error": true,
	"rdb-key-save-delay": true, "repl-diskless-load": true,
	// server/protected.go, Server.processInput
	"protected-mode": true, "client-query-buffer-limit": true,
}

// normalize validates args for sp and returns the value as CONFIG GET
// shows it, or the reason it is wrong (Redis's words).
func (sp *spec) normalize(args []string) (string, error) {
	switch sp.kind {
	case kindBool:
		v, err := one(args)
		if err != nil {
			return "", err
		}
		switch strings.ToLower(v) {
		case "yes":
			return "yes", nil
		case "no":
			return "no", nil
		}
		return "", errArg("argument must be 'yes' or 'no'")
	case kindEnum:
		if sp.flags&multiFlag == 0 && len(args) != 1 {
			return "", errArg("wrong number of arguments")
		}
		var out []string
	next:
		for _, a := range args {
			for _, e := range sp.enum {
				if strings.EqualFold(a, e) {
					out = append(out, e)
					continue next
				}
			}
			return "", errArg("argument(s) must be one of the following: " + strings.Join(sp.enum, ", "))
		}
		return strings.Join(out, " "), nil
	case kindNumber:
		v, err := one(args)
		if err != nil {
			return "", err
		}
		return sp.number(v)
	}
	return strings.Join(args, " "), nil
}

func (sp *spec) number(v string) (string, error) {
	var n int64
	parsed := false
	if sp.num&numMemory != 0 {
		if u, ok := memToULL(v); ok {
			n, parsed = int64(u), true
		}
	}
	if !parsed && sp.num&numPercent != 0 && len(v) > 1 && v[len(v)-1] == '%' {
		if p, ok := resp.ParseInt([]byte(v[:len(v)-1])); ok && p >= 0 {
			n, parsed = -p, true
		}
	}
	if !parsed && sp.num&numOctal != 0 {
		if o, err := strconv.ParseInt(v, 8, 64); err == nil {
			n, parsed = o, true
		}
	}
	if !parsed && sp.num&^numUnsigned == 0 {
		n, parsed = resp.ParseInt([]byte(v))
	}
	if !parsed {
		switch {
		case sp.num&numMemory != 0 && sp.num&numPercent != 0:
			return "", errArg("argument must be a memory or percent value")
		case sp.num&numMemory != 0:
			return "", errArg("argument must be a memory value")
		case sp.num&numOctal != 0:
			return "", errArg("argument couldn't be parsed as an octal number")
		}
		return "", errArg("argument couldn't be parsed into an integer")
	}
	if sp.num&numUnsigned != 0 {
		if u := uint64(n); u > sp.hi || u < uint64(sp.lo) {
			if sp.num&numOctal != 0 {
				return "", errArg("argument must be between " + strconv.FormatUint(uint64(sp.lo), 8) + " and " + strconv.FormatUint(sp.hi, 8) + " inclusive")
			}
			return "", errArg("argument must be between " + strconv.FormatUint(uint64(sp.lo), 10) + " and " + strconv.FormatUint(sp.hi, 10) + " inclusive")
		}
	} else if sp.num&numPercent != 0 && n < 0 {
		if n < sp.lo {
			return "", errArg("percentage argument must be less or equal to " + strconv.FormatInt(-sp.lo, 10))
		}
	} else if n < sp.lo || (n >= 0 && uint64(n) > sp.hi) {
		return "", errArg("argument must be between " + strconv.FormatInt(sp.lo, 10) + " and " + strconv.FormatUint(sp.hi, 10) + " inclusive")
	}
	switch {
	case sp.num&numPercent != 0 && n < 0:
		return strconv.FormatInt(-n, 10) + "%", nil
	case sp.num&numMemory != 0 || sp.num&numUnsigned != 0:
		return strconv.FormatUint(uint64(n), 10), nil
	case sp.num&numOctal != 0:
		return strconv.FormatInt(n, 8), nil
	}
	return strconv.FormatInt(n, 10), nil
}

// memToULL parses a memory value as Redis's memtoull: digits with an
// optional unit (b, k, kb, m, mb, g, gb; any case), no sign.
func memToULL(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(s[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	return v * mul, true
}

// SetError is why CONFIG SET failed: Unknown (the name is no directive) or
// the reason for the directive named Name.
type SetError struct {
	Name    string
	Reason  string
	Unknown bool
}

func (e *SetError) Error() string {
	if e.Unknown {
		return "Unknown option or number of arguments for CONFIG SET - '" + e.Name + "'"
	}
	if e.Reason == "" {
		return "CONFIG SET failed (possibly related to argument '" + e.Name + "')"
	}
	return "CONFIG SET failed (possibly related to argument '" + e.Name + "') - " + e.Reason
}

// SetMany is CONFIG SET name value [name value ...]: all or nothing, as in
// Redis (unknown names first, then immutable, protected and duplicate ones,
// then each value in turn, the earlier ones restored when one fails).
// allowProtected says whether protected directives (dir, dbfilename) may
// change for this client. It returns the canonical names changed.
func (c *Config) SetMany(pairs [][2]string, allowProtected bool) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// One pass in order: the first unknown, immutable, protected or
	// duplicate name is the error. An alias is a directive of its own to
	// Redis here (its name in errors, no duplicate of its target).
	ds := make([]directive, len(pairs))
	f := c.fields()
	for i, p := range pairs {
		d, ok := canonical(p[0])
		if !ok {
			return nil, &SetError{Name: p[0], Unknown: true}
		}
		ds[i] = d
		sp := specs[d.name]
		fd, hasField := f[d.name]
		if (sp != nil && sp.flags&immutableFlag != 0) || (hasField && fd.immutable) || (hasField && fd.fixed && p[1] != fd.get()) {
			return nil, &SetError{Name: p[0], Reason: "can't set immutable config"}
		}
		if sp != nil && sp.flags&protectedFlag != 0 && !allowProtected {
			return nil, &SetError{Name: p[0], Reason: "can't set protected config"}
		}
		for j := 0; j < i; j++ {
			if pairs[j][0] == p[0] {
				return nil, &SetError{Name: p[0], Reason: "duplicate parameter"}
			}
		}
	}
	old := make([]string, len(pairs))
	for i, d := range ds {
		old[i] = c.valueLocked(d.name, f)
	}
	for i, p := range pairs {
		if err := c.setLocked(ds[i], p[1], f); err != nil {
			for j := i; j >= 0; j-- {
				c.setLocked(ds[j], old[j], f)
			}
			return nil, &SetError{Name: p[0], Reason: err.Error()}
		}
	}
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.name
	}
	return names, nil
}

func (c *Config) valueLocked(name string, f map[string]field) string {
	if fd, ok := f[name]; ok {
		return fd.get()
	}
	if v, ok := c.Unsupported[name]; ok {
		return v
	}
	return redisDefaults[name]
}

func (c *Config) setLocked(d directive, value string, f map[string]field) error {
	args := []string{value}
	if d.multi {
		split, ok := resp.SplitArgs([]byte(value), nil)
		if ok && value != "" {
			args = args[:0]
			for _, s := range split {
				args = append(args, string(s))
			}
		}
	}
	if sp := specs[d.name]; sp != nil && sp.kind != kindSpecial && sp.kind != kindString {
		v, err := sp.normalize(args)
		if err != nil {
			return err
		}
		args = []string{v}
	}
	if fd, ok := f[d.name]; ok {
		return fd.set(args)
	}
	c.Unsupported[d.name] = strings.Join(args, " ")
	return nil
}
