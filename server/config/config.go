// Package config parses redis.conf files and redis-server style command-line
// arguments into a Config, as Redis 7.0 does: every directive Redis accepts is
// accepted here (with one warning if it has no effect), anything else is a
// fatal error naming the line.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/redline-dev/redline/server/resp"
)

// Version is the Redis version the server reports.
const Version = "7.0.15"

// Config is the server configuration. Fields are read by the server; the
// cluster-* and replication fields are for cluster mode.
type Config struct {
	mu sync.Mutex

	Port            int
	Bind            []string
	Dir             string
	RequirePass     string
	MaxClients      int
	ProtoMaxBulkLen int64
	Databases       int
	LogFile         string
	LogLevel        string
	PidFile         string
	Timeout         int // client idle timeout, seconds (0 = none)
	Hz              int
	Save            string
	Daemonize       bool

	AppendOnly               bool
	AppendFsync              string // always | everysec | no
	AppendFilename           string
	AppendDirname            string
	AutoAOFRewritePercentage int
	AutoAOFRewriteMinSize    int64
	AOFLoadTruncated         bool

	BusyReplyThreshold int64 // lua-time-limit, ms

	ClusterEnabled               bool
	ClusterConfigFile            string
	ClusterNodeTimeout           int64 // ms
	ClusterPort                  int   // 0 = port+10000
	ClusterAnnounceIP            string
	ClusterAnnouncePort          int
	ClusterAnnounceBusPort       int
	ClusterAnnounceHostname      string
	ClusterPreferredEndpointType string // ip, hostname or unknown-endpoint
	ClusterRequireFullCoverage   bool
	ClusterAllowReadsWhenDown    bool
	ClusterSlotStatsEnabled      bool // Redis 8.2: CLUSTER SLOT-STATS cpu and network figures
	ClusterMigrationBarrier      int
	ClusterReplicaValidityFactor int
	ClusterReplicaNoFailover     bool
	ClusterAllowReplicaMigration bool

	ReplicaOf             string // "host port" or ""
	MasterAuth            string
	MasterUser            string
	ReplicaReadOnly       bool
	ReplicaServeStaleData bool
	ReplBacklogSize       int64
	ReplTimeout           int // seconds
	ReplPingReplicaPeriod int // seconds
	ReplDisklessSync      bool
	MinReplicasToWrite    int
	MinReplicasMaxLag     int // seconds
	ReplicaPriority       int

	HLLSparseMaxBytes int64 // hll-sparse-max-bytes

	// ACL: aclfile, acl-pubsub-default (allchannels | resetchannels),
	// acllog-max-len, and the "user" directives (name then rules), applied
	// at start as Redis's ACLLoadUsersAtStartup.
	ACLFile          string
	ACLPubsubDefault string
	ACLLogMaxLen     int
	Users            [][]string
	// ACLUsers, set by the server, gives the users as "user NAME rules"
	// lines for CONFIG REWRITE (Redis's rewriteConfigUserOption).
	ACLUsers func() []string

	NotifyKeyspaceEvents int // notify-keyspace-events as Notify* bits (notify.go)

	// File is the absolute path of the config file given on the command
	// line ("" if none): CONFIG REWRITE writes it.
	File string
	// Unsupported holds directives that were accepted but have no effect,
	// with their values, by canonical name.
	Unsupported map[string]string
	// Warnings are the log lines to print once at start.
	Warnings []string
}

// Default returns Redis 7.0's defaults.
func Default() *Config {
	return &Config{
		Port:                         6379,
		Bind:                         []string{"*", "-::*"},
		Dir:                          ".",
		MaxClients:                   10000,
		ProtoMaxBulkLen:              512 << 20,
		Databases:                    16,
		LogLevel:                     "notice",
		Hz:                           10,
		Save:                         "3600 1 300 100 60 10000",
		AppendFsync:                  "everysec",
		AppendFilename:               "appendonly.aof",
		AppendDirname:                "appendonlydir",
		AutoAOFRewritePercentage:     100,
		AutoAOFRewriteMinSize:        64 << 20,
		AOFLoadTruncated:             true,
		BusyReplyThreshold:           5000,
		ClusterConfigFile:            "nodes.conf",
		ClusterNodeTimeout:           15000,
		ClusterRequireFullCoverage:   true,
		ClusterMigrationBarrier:      1,
		ClusterReplicaValidityFactor: 10,
		ClusterAllowReplicaMigration: true,
		ClusterPreferredEndpointType: "ip",
		ReplicaReadOnly:              true,
		ReplicaServeStaleData:        true,
		ReplBacklogSize:              1 << 20,
		ReplTimeout:                  60,
		ReplPingReplicaPeriod:        10,
		HLLSparseMaxBytes:            3000,
		ReplDisklessSync:             true,
		MinReplicasMaxLag:            10,
		ReplicaPriority:              100,
		ACLPubsubDefault:             "resetchannels",
		ACLLogMaxLen:                 128,
		Unsupported:                  map[string]string{},
	}
}

// field is an implemented directive.
type field struct {
	set func(args []string) error
	get func() string
	// immutable directives cannot be changed by CONFIG SET.
	immutable bool
	// fixed directives are mutable in Redis but set once at start here
	// (port: the listener is bound then): CONFIG SET accepts only the
	// value they have, as Redis's test suite's "CONFIG sanity" sets every
	// directive to its own value.
	fixed bool
}

type errArg string

func (e errArg) Error() string { return string(e) }

func one(args []string) (string, error) {
	if len(args) != 1 {
		return "", errArg("wrong number of arguments")
	}
	return args[0], nil
}

func boolField(p *bool) field {
	return field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			switch strings.ToLower(v) {
			case "yes":
				*p = true
			case "no":
				*p = false
			default:
				return errArg("argument must be 'yes' or 'no'")
			}
			return nil
		},
		get: func() string {
			if *p {
				return "yes"
			}
			return "no"
		},
	}
}

func intField(p *int, lo, hi int64) field {
	return field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			n, ok := resp.ParseInt([]byte(v))
			if !ok {
				return errArg("argument couldn't be parsed into an integer")
			}
			if n < lo || n > hi {
				return errArg(fmt.Sprintf("argument must be between %d and %d inclusive", lo, hi))
			}
			*p = int(n)
			return nil
		},
		get: func() string { return strconv.Itoa(*p) },
	}
}

func memField(p *int64, lo, hi int64) field {
	return field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			n, ok := ParseMemory(v)
			if !ok {
				return errArg("argument must be a memory value")
			}
			if n < lo || n > hi {
				return errArg(fmt.Sprintf("argument must be between %d and %d inclusive", lo, hi))
			}
			*p = n
			return nil
		},
		get: func() string { return strconv.FormatInt(*p, 10) },
	}
}

func stringField(p *string) field {
	return field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			*p = v
			return nil
		},
		get: func() string { return *p },
	}
}

func enumField(p *string, values ...string) field {
	return field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			for _, x := range values {
				if strings.EqualFold(v, x) {
					*p = x
					return nil
				}
			}
			return errArg("argument(s) must be one of the following: " + strings.Join(values, ", "))
		},
		get: func() string { return *p },
	}
}

// hostnameField is cluster-announce-hostname, validated as Redis does.
func hostnameField(p *string) field {
	return field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			if len(v) >= 256 {
				return errArg("Hostnames must be less than 256 characters")
			}
			for _, r := range v {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
					return errArg("Hostnames may only contain alphanumeric characters, hyphens or dots")
				}
			}
			*p = v
			return nil
		},
		get: func() string { return *p },
	}
}

func immutable(f field) field { f.immutable = true; return f }

func fixed(f field) field { f.fixed = true; return f }

// fields returns the implemented directives bound to c.
func (c *Config) fields() map[string]field {
	f := map[string]field{
		"port":                            fixed(intField(&c.Port, 0, 65535)),
		"dir":                             stringField(&c.Dir),
		"requirepass":                     stringField(&c.RequirePass),
		"aclfile":                         immutable(stringField(&c.ACLFile)),
		"acl-pubsub-default":              enumField(&c.ACLPubsubDefault, "allchannels", "resetchannels"),
		"acllog-max-len":                  intField(&c.ACLLogMaxLen, 0, 1<<63-1),
		"maxclients":                      intField(&c.MaxClients, 1, 1<<31-1),
		"proto-max-bulk-len":              memField(&c.ProtoMaxBulkLen, 1024*1024, 1<<62),
		"databases":                       immutable(intField(&c.Databases, 1, 1<<31-1)),
		"logfile":                         immutable(stringField(&c.LogFile)),
		"loglevel":                        enumField(&c.LogLevel, "debug", "verbose", "notice", "warning", "nothing"),
		"pidfile":                         immutable(stringField(&c.PidFile)),
		"timeout":                         intField(&c.Timeout, 0, 1<<31-1),
		"hz":                              intField(&c.Hz, 0, 1<<31-1),
		"daemonize":                       immutable(boolField(&c.Daemonize)),
		"appendonly":                      boolField(&c.AppendOnly),
		"appendfsync":                     enumField(&c.AppendFsync, "everysec", "always", "no"),
		"appendfilename":                  immutable(stringField(&c.AppendFilename)),
		"appenddirname":                   immutable(stringField(&c.AppendDirname)),
		"auto-aof-rewrite-percentage":     intField(&c.AutoAOFRewritePercentage, 0, 1<<31-1),
		"auto-aof-rewrite-min-size":       memField(&c.AutoAOFRewriteMinSize, 0, 1<<62),
		"aof-load-truncated":              boolField(&c.AOFLoadTruncated),
		"cluster-enabled":                 immutable(boolField(&c.ClusterEnabled)),
		"cluster-config-file":             immutable(stringField(&c.ClusterConfigFile)),
		"cluster-port":                    immutable(intField(&c.ClusterPort, 0, 65535)),
		"cluster-announce-ip":             stringField(&c.ClusterAnnounceIP),
		"cluster-announce-port":           intField(&c.ClusterAnnouncePort, 0, 65535),
		"cluster-announce-bus-port":       intField(&c.ClusterAnnounceBusPort, 0, 65535),
		"cluster-announce-hostname":       hostnameField(&c.ClusterAnnounceHostname),
		"cluster-preferred-endpoint-type": enumField(&c.ClusterPreferredEndpointType, "ip", "hostname", "unknown-endpoint"),
		"cluster-require-full-coverage":   boolField(&c.ClusterRequireFullCoverage),
		"cluster-allow-reads-when-down":   boolField(&c.ClusterAllowReadsWhenDown),
		"cluster-slot-stats-enabled":      boolField(&c.ClusterSlotStatsEnabled),
		"cluster-migration-barrier":       intField(&c.ClusterMigrationBarrier, 0, 1<<31-1),
		"cluster-replica-validity-factor": intField(&c.ClusterReplicaValidityFactor, 0, 1<<31-1),
		"cluster-replica-no-failover":     boolField(&c.ClusterReplicaNoFailover),
		"cluster-allow-replica-migration": boolField(&c.ClusterAllowReplicaMigration),
		"masterauth":                      stringField(&c.MasterAuth),
		"masteruser":                      stringField(&c.MasterUser),
		"replica-read-only":               boolField(&c.ReplicaReadOnly),
		"replica-serve-stale-data":        boolField(&c.ReplicaServeStaleData),
		"repl-backlog-size":               memField(&c.ReplBacklogSize, 1, 1<<62),
		"repl-timeout":                    intField(&c.ReplTimeout, 1, 1<<31-1),
		"repl-ping-replica-period":        intField(&c.ReplPingReplicaPeriod, 1, 1<<31-1),
		"repl-diskless-sync":              boolField(&c.ReplDisklessSync),
		"min-replicas-to-write":           intField(&c.MinReplicasToWrite, 0, 1<<31-1),
		"min-replicas-max-lag":            intField(&c.MinReplicasMaxLag, 0, 1<<31-1),
		"replica-priority":                intField(&c.ReplicaPriority, 0, 1<<31-1),
		"hll-sparse-max-bytes":            memField(&c.HLLSparseMaxBytes, 0, 1<<63-1),
	}
	f["cluster-node-timeout"] = field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			n, ok := resp.ParseInt([]byte(v))
			if !ok || n < 0 {
				return errArg("argument couldn't be parsed into an integer")
			}
			c.ClusterNodeTimeout = n
			return nil
		},
		get: func() string { return strconv.FormatInt(c.ClusterNodeTimeout, 10) },
	}
	f["lua-time-limit"] = field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			n, ok := resp.ParseInt([]byte(v))
			if !ok || n < 0 {
				return errArg("argument couldn't be parsed into an integer")
			}
			c.BusyReplyThreshold = n
			return nil
		},
		get: func() string { return strconv.FormatInt(c.BusyReplyThreshold, 10) },
	}
	f["busy-reply-threshold"] = f["lua-time-limit"]
	f["notify-keyspace-events"] = keyspaceEventsField(&c.NotifyKeyspaceEvents)
	f["bind"] = field{
		set: func(a []string) error {
			if len(a) == 0 || len(a) > 16 {
				return errArg("Too many bind addresses specified.")
			}
			if len(a) == 1 && a[0] == "" {
				c.Bind = nil
				return nil
			}
			c.Bind = append([]string(nil), a...)
			return nil
		},
		get: func() string { return strings.Join(c.Bind, " ") },
	}
	f["save"] = field{
		set: func(a []string) error {
			if len(a) == 1 && a[0] == "" {
				c.Save = ""
				return nil
			}
			if len(a)%2 != 0 {
				return errArg("Invalid save parameters")
			}
			for _, x := range a {
				if _, err := strconv.Atoi(x); err != nil {
					return errArg("Invalid save parameters")
				}
			}
			c.Save = strings.Join(a, " ")
			return nil
		},
		get: func() string { return c.Save },
	}
	f["replicaof"] = field{
		set: func(a []string) error {
			if len(a) != 2 {
				return errArg("wrong number of arguments")
			}
			if strings.EqualFold(a[0], "no") && strings.EqualFold(a[1], "one") {
				c.ReplicaOf = ""
				return nil
			}
			if _, err := strconv.Atoi(a[1]); err != nil {
				return errArg("Invalid master port")
			}
			c.ReplicaOf = a[0] + " " + a[1]
			return nil
		},
		get:       func() string { return c.ReplicaOf },
		immutable: true,
	}
	return f
}

// Directives that are no-ops here but harmless: accepted silently because
// they only tune things this server does differently or not at all, and a
// warning for each would drown the log of a stock redis.conf.
var silent = map[string]bool{
	"tcp-backlog": true, "tcp-keepalive": true, "supervised": true,
	"always-show-logo": true, "set-proc-title": true, "proc-title-template": true, "syslog-enabled": true,
	"syslog-ident": true, "syslog-facility": true, "crash-log-enabled": true, "crash-memcheck-enabled": true,
	"unixsocket": true, "unixsocketperm": true, "locale-collate": true,
}

var byName = func() map[string]directive {
	m := make(map[string]directive, len(redisDirectives)*2)
	for _, d := range redisDirectives {
		m[d.name] = d
		if d.alias != "" {
			m[d.alias] = d
		}
	}
	return m
}()

// canonical maps aliases (slaveof, ...) to their directive names.
func canonical(name string) (directive, bool) {
	d, ok := byName[strings.ToLower(name)]
	return d, ok
}

// Error is a fatal configuration error, printed like Redis does.
type Error struct {
	Line   int
	Text   string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s", Version, e.Line, e.Text, e.Reason)
}

// ParseArgs parses redis-server style arguments: an optional config file path
// first, then "--name value ..." options (applied after the file, in order).
func ParseArgs(args []string) (*Config, error) {
	text, file := "", ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		path := args[0]
		file = path
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("Fatal error, can't open config file '%s': %v", path, err)
		}
		text = string(b)
		args = args[1:]
	}
	// Options become extra config lines, as redis-server does.
	var opts strings.Builder
	for i, a := range args {
		if strings.HasPrefix(a, "--") && len(a) > 2 {
			if i > 0 {
				opts.WriteByte('\n')
			}
			opts.WriteString(a[2:])
			continue
		}
		if i == 0 {
			return nil, fmt.Errorf("invalid option %q: options look like --port 7000", a)
		}
		opts.WriteByte(' ')
		opts.WriteString(quote(a))
	}
	if opts.Len() > 0 {
		text += "\n" + opts.String()
	}
	c := Default()
	if err := c.Load(text); err != nil {
		return nil, err
	}
	if file != "" {
		c.File, _ = filepath.Abs(file)
	}
	return c, nil
}

func quote(s string) string {
	if s == "" {
		return `""`
	}
	return strconv.Quote(s)
}

// Load applies config text (redis.conf syntax) on top of c.
func (c *Config) Load(text string) error {
	f := c.fields()
	warned := map[string]bool{}
	for i, raw := range strings.Split(text, "\n") {
		line := strings.Trim(raw, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		argv, ok := resp.SplitArgs([]byte(line), nil)
		if !ok {
			return &Error{i + 1, line, "Unbalanced quotes in configuration line"}
		}
		if len(argv) == 0 {
			continue
		}
		args := make([]string, len(argv)-1)
		for j, a := range argv[1:] {
			args[j] = string(a)
		}
		name := strings.ToLower(string(argv[0]))
		d, known := canonical(name)
		if !known {
			switch {
			case (name == "list-max-ziplist-entries" || name == "list-max-ziplist-value" || name == "lua-replicate-commands") && len(args) == 1:
				continue
			case name == "include" && len(args) == 1:
				b, err := os.ReadFile(args[0])
				if err != nil {
					return &Error{i + 1, line, "Fatal error, can't open config file '" + args[0] + "'"}
				}
				if err := c.Load(string(b)); err != nil {
					return err
				}
				continue
			case name == "user" && len(args) >= 1:
				if len(args) == 1 { // --user "name rules..." on the command line
					args = strings.Fields(args[0])
				}
				c.Users = append(c.Users, args)
				continue
			case (name == "rename-command" && len(args) == 2) || (name == "loadmodule" && len(args) >= 1):
				c.warnOnce(warned, name, strings.Join(args, " "))
				continue
			case strings.Contains(name, ".") && len(args) >= 1:
				c.warnOnce(warned, name, strings.Join(args, " "))
				continue
			}
			return &Error{i + 1, line, "Bad directive or wrong number of arguments"}
		}
		if !d.multi && len(args) != 1 {
			return &Error{i + 1, line, "wrong number of arguments"}
		}
		if d.multi && len(args) == 1 && args[0] != "" {
			split, ok := resp.SplitArgs([]byte(args[0]), nil)
			if ok {
				args = args[:0]
				for _, s := range split {
					args = append(args, string(s))
				}
			}
		}
		if fd, ok := f[d.name]; ok {
			if err := fd.set(args); err != nil {
				return &Error{i + 1, line, err.Error()}
			}
			// Accepted, but this server does not do what they ask.
			if d.name == "daemonize" && c.Daemonize {
				c.warnOnce(warned, d.name, strings.Join(args, " "))
			}
			continue
		}
		if sp := specs[d.name]; sp != nil && sp.kind != kindSpecial && sp.kind != kindString {
			v, err := sp.normalize(args)
			if err != nil {
				return &Error{i + 1, line, err.Error()}
			}
			args = []string{v}
		}
		c.warnOnce(warned, d.name, strings.Join(args, " "))
	}
	return nil
}

func (c *Config) warnOnce(warned map[string]bool, name, value string) {
	if _, implemented := c.fields()[name]; !implemented {
		c.Unsupported[name] = value
	}
	if warned[name] || silent[name] || Effective[name] {
		return
	}
	warned[name] = true
	c.Warnings = append(c.Warnings, fmt.Sprintf("config directive '%s' is accepted but has no effect in this server", name))
}

// Get returns the directives matching a glob pattern with their values, as
// CONFIG GET does (name, value pairs, sorted by name).
func (c *Config) Get(pattern string, match func(pattern, name string) bool) [][2]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.fields()
	seen := map[string]bool{}
	var out [][2]string
	for _, d := range redisDirectives {
		for _, n := range []string{d.name, d.alias} {
			if n == "" || seen[n] || (hidden[n] && pattern != n) || !match(pattern, n) {
				continue
			}
			seen[n] = true
			if fd, ok := f[d.name]; ok {
				out = append(out, [2]string{n, fd.get()})
			} else if v, ok := c.Unsupported[d.name]; ok {
				out = append(out, [2]string{n, v})
			} else {
				out = append(out, [2]string{n, redisDefaults[d.name]})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Set changes one directive at runtime (CONFIG SET name value).
func (c *Config) Set(name string, value string) error {
	_, err := c.SetMany([][2]string{{name, value}}, true)
	return err
}

// Known reports whether name is a directive of Redis 7.0 (or an alias).
func Known(name string) bool { _, ok := canonical(name); return ok }

// ParseMemory parses a memory value like Redis's memtoull: 1k, 1kb, 1m, 1mb,
// 1g, 1gb (k = 1000, kb = 1024), or a plain number.
func ParseMemory(s string) (int64, bool) {
	ls := strings.ToLower(s)
	mul := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"kb", 1024}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
		if strings.HasSuffix(ls, u.suf) {
			mul = u.m
			ls = ls[:len(ls)-len(u.suf)]
			break
		}
	}
	n, err := strconv.ParseInt(ls, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mul, true
}
