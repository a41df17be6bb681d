package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/redline-dev/redline/server/resp"
)

// Redis 7.0 functions: libraries of Lua functions loaded with FUNCTION LOAD
// (code starting with "#!lua name=<lib>" that calls redis.register_function)
// and called with FCALL / FCALL_RO. They run on the same Lua state, sandbox
// and redis.call as EVAL scripts; a function gets KEYS and ARGV as its two
// arguments instead of globals. FUNCTION LOAD, DELETE, FLUSH and RESTORE are
// propagated (AOF, replicas) and Snapshot carries the libraries, so a
// replica or a rewritten AOF has the functions its primary has.

// Script flags of a function (redis.register_function's flags).
const (
	fnNoWrites uint8 = 1 << iota
	fnAllowOOM
	fnAllowStale
	fnNoCluster
	fnAllowCrossSlot
)

var fnFlagNames = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

func newFunctionLibs() *functionLibs {
	return &functionLibs{libs: map[string]*fnLibrary{}, funcs: map[string]*luaFunction{}}
}

func (s *Server) functions() *functionLibs {
	sc := s.scripts
	if sc.fns == nil {
		sc.fns = newFunctionLibs()
		sc.installRegisterFunction()
	}
	return sc.fns
}

// installRegisterFunction builds the redis table a library sees while
// FUNCTION LOAD runs it, as Redis 7.0's: register_function, log and the
// LOG_* and version constants, any other field an error ("Script attempted
// to access nonexistent global variable"). Functions and scripts run with
// the real redis table, which has no register_function; a function that
// kept the load table and calls its register_function later gets "can only
// be called on FUNCTION LOAD command".
func (sc *scripting) installRegisterFunction() {
	L := sc.L
	redis, ok := L.G.Global.RawGetString("redis").(*lua.LTable)
	if !ok {
		return
	}
	load := L.NewTable()
	for _, k := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		load.RawSetString(k, redis.RawGetString(k))
	}
	missing := L.NewTable()
	missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.CheckString(2))
		return 0
	}))
	L.SetMetatable(load, missing)
	sc.loadRedis = load
	// Redis's EVAL and function redis table has no register_function:
	// calling it is Lua's error for a nil field, reproduced here because
	// gopher-lua words that error differently.
	redis.RawSetString("register_function", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("attempt to call field 'register_function' (a nil value)")
		return 0
	}))
	load.RawSetString("register_function", L.NewFunction(func(L *lua.LState) int {
		lib := sc.fns.loading
		if lib == nil {
			L.RaiseError("redis.register_function can only be called on FUNCTION LOAD command")
			return 0
		}
		f, err := readRegisterArgs(L)
		if err != "" {
			L.RaiseError("%s", err)
			return 0
		}
		if !validFunctionName(f.name) {
			// (Redis 7.0 says "Library names" here too.)
			L.RaiseError("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
			return 0
		}
		for _, g := range lib.funcs {
			if strings.EqualFold(g.name, f.name) {
				L.RaiseError("Function already exists in the library")
				return 0
			}
		}
		f.lib = lib
		lib.funcs = append(lib.funcs, f)
		return 0
	}))
}

// readRegisterArgs reads redis.register_function(name, fn) or
// redis.register_function{function_name=, callback=, flags=, description=}.
func readRegisterArgs(L *lua.LState) (*luaFunction, string) {
	switch L.GetTop() {
	case 2:
		name, ok := L.Get(1).(lua.LString)
		if !ok {
			return nil, "first argument to redis.register_function must be a string"
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return nil, "second argument to redis.register_function must be a function"
		}
		return &luaFunction{name: string(name), fn: fn}, ""
	case 1:
	default:
		return nil, "wrong number of arguments to redis.register_function"
	}
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	f := &luaFunction{}
	var err string
	t.ForEach(func(k, v lua.LValue) {
		if err != "" {
			return
		}
		key, ok := k.(lua.LString)
		if !ok {
			err = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(string(key)) {
		case "function_name":
			s, ok := v.(lua.LString)
			if !ok {
				err = "function_name argument given to redis.register_function must be a string"
			}
			f.name = string(s)
		case "description":
			s, ok := v.(lua.LString)
			if !ok {
				err = "description argument given to redis.register_function must be a string"
			}
			f.desc = string(s)
		case "callback":
			fn, ok := v.(*lua.LFunction)
			if !ok {
				err = "callback argument given to redis.register_function must be a function"
			}
			f.fn = fn
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				err = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			ft.ForEach(func(_, fv lua.LValue) {
				found := false
				if s, ok := fv.(lua.LString); ok {
					for i, n := range fnFlagNames {
						if strings.EqualFold(n, string(s)) {
							f.flags |= 1 << i
							found = true
						}
					}
				}
				if !found && err == "" {
					err = "unknown flag given"
				}
			})
		default:
			err = "unknown argument given to redis.register_function"
		}
	})
	if err != "" {
		return nil, err
	}
	if f.name == "" {
		return nil, "redis.register_function must get a function name argument"
	}
	if f.fn == nil {
		return nil, "redis.register_function must get a callback argument"
	}
	return f, ""
}

func validFunctionName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// parseLibraryCode reads the "#!<engine> name=<lib>" first line.
func parseLibraryCode(code string) (name string, err error) {
	if !strings.HasPrefix(code, "#!") {
		return "", errors.New("ERR Missing library metadata")
	}
	// As Redis's functionExtractLibMetaData: the shebang line up to a
	// newline, split like redis-cli arguments (name="foo" is foo).
	nl := strings.IndexByte(code, '\n')
	if nl < 0 {
		return "", errors.New("ERR Invalid library metadata")
	}
	split, ok := resp.SplitArgs([]byte(code[:nl]), nil)
	if !ok || len(split) == 0 {
		return "", errors.New("ERR Invalid library metadata")
	}
	engine := strings.TrimPrefix(string(split[0]), "#!")
	seen := false
	for _, b := range split[1:] {
		p := string(b)
		if len(p) < 5 || !strings.EqualFold(p[:5], "name=") {
			return "", fmt.Errorf("ERR Invalid metadata value given: %s", p)
		}
		if seen {
			return "", errors.New("ERR Invalid metadata value, name argument was given multiple times")
		}
		seen = true
		name = p[len("name="):]
	}
	if !seen {
		return "", errors.New("ERR Library name was not given")
	}
	if !validFunctionName(name) {
		return "", errors.New("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
	}
	if !strings.EqualFold(engine, "lua") {
		return "", fmt.Errorf("ERR Engine '%s' not found", engine)
	}
	return name, nil
}

// compileLibrary runs a library's code and returns what it registered, not
// yet installed. The code's own first line (the shebang) is a Lua comment
// only as a whole-file "#" line, so it is blanked before compiling.
func (s *Server) compileLibrary(code string) (*fnLibrary, error) {
	name, err := parseLibraryCode(code)
	if err != nil {
		return nil, err
	}
	fl := s.functions()
	sc := s.scripts
	body := code
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i:]
	} else {
		body = ""
	}
	fn, lerr := sc.L.Load(strings.NewReader(body), "@user_function")
	if lerr != nil {
		return nil, fmt.Errorf("ERR Error compiling function: %s", strings.TrimPrefix(lerr.Error(), "@"))
	}
	lib := &fnLibrary{name: name, code: code}
	// The library runs with one global, the load redis table (no
	// redis.call, no math, no library at all), as in Redis 7.0: loading
	// runs no command and is deterministic. It must end within 500 ms
	// (Redis's LOAD_TIMEOUT_MS), or the load fails.
	globals := sc.sandbox.globals
	var saved []lua.LValue // key, value, ...
	globals.ForEach(func(k, v lua.LValue) { saved = append(saved, k, v) })
	for i := 0; i < len(saved); i += 2 {
		globals.RawSet(saved[i], lua.LNil)
	}
	globals.RawSetString("redis", sc.sandbox.protect(sc.loadRedis))
	fl.loading = lib
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	sc.L.SetContext(ctx)
	sc.L.Push(fn)
	perr := sc.L.PCall(0, 0, nil)
	timedOut := ctx.Err() != nil
	cancel()
	sc.L.RemoveContext()
	fl.loading = nil
	globals.RawSetString("redis", lua.LNil)
	for i := 0; i < len(saved); i += 2 {
		globals.RawSet(saved[i], saved[i+1])
	}
	sc.sandbox.wipe()
	if timedOut {
		sc.L.SetTop(0)
		return nil, errors.New("ERR Error registering functions: ERR FUNCTION LOAD timeout")
	}
	if perr != nil {
		msg := perr.Error()
		var ae *lua.ApiError
		if errors.As(perr, &ae) {
			msg = strings.TrimPrefix(ae.Object.String(), "@")
		}
		return nil, fmt.Errorf("ERR Error registering functions: ERR %s", msg)
	}
	if len(lib.funcs) == 0 {
		return nil, errors.New("ERR No functions registered")
	}
	return lib, nil
}

// install adds lib, replacing the library of the same name when replace is
// set. It fails, changing nothing, when the library or one of its functions
// already exists elsewhere.
func (fl *functionLibs) install(lib *fnLibrary, replace bool) error {
	old := fl.libs[strings.ToLower(lib.name)]
	if old != nil && !replace {
		return fmt.Errorf("ERR Library '%s' already exists", lib.name)
	}
	for _, f := range lib.funcs {
		if g := fl.funcs[strings.ToLower(f.name)]; g != nil && g.lib != old {
			return fmt.Errorf("ERR Function %s already exists", f.name)
		}
	}
	if old != nil {
		fl.remove(old)
	}
	fl.libs[strings.ToLower(lib.name)] = lib
	for _, f := range lib.funcs {
		fl.funcs[strings.ToLower(f.name)] = f
	}
	return nil
}

func (fl *functionLibs) remove(lib *fnLibrary) {
	delete(fl.libs, strings.ToLower(lib.name))
	for _, f := range lib.funcs {
		delete(fl.funcs, strings.ToLower(f.name))
	}
}

func (fl *functionLibs) sorted() []*fnLibrary {
	out := make([]*fnLibrary, 0, len(fl.libs))
	for _, l := range fl.libs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// functionCommand answers FUNCTION STATS and FUNCTION KILL while a script
// runs past busy-reply-threshold (without the server lock); it reports
// whether it answered.
func (b *busyScript) functionCommand(c *Client, sub []byte) bool {
	switch {
	case eq(sub, "kill"):
		c.out = append(c.out, b.kill(true)...)
		return true
	case eq(sub, "stats"):
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.fn == nil {
			return false
		}
		c.Map(2)
		c.BulkString("running_script")
		c.Map(3)
		c.BulkString("name")
		c.BulkString(b.fn.name)
		c.BulkString("command")
		c.Array(len(b.fn.argv))
		for _, a := range b.fn.argv {
			c.BulkString(a)
		}
		c.BulkString("duration_ms")
		c.Int(time.Since(time.Unix(0, b.start.Load())).Milliseconds())
		functionEngines(c, b.fn.libs, b.fn.funcs)
		return true
	}
	return false
}

// FUNCTION DUMP payload (ours, like store.Dump's): for each library the
// byte 0xF5 (Redis's RDB_OPCODE_FUNCTION2) and its uvarint-prefixed code,
// then a 2-byte format version and a CRC-64/ECMA of all before it.
const fnDumpOpcode = 0xF5

var fnCRC = crc64.MakeTable(crc64.ECMA)

func (fl *functionLibs) dump() []byte {
	var b []byte
	for _, l := range fl.sorted() {
		b = append(b, fnDumpOpcode)
		b = binary.AppendUvarint(b, uint64(len(l.code)))
		b = append(b, l.code...)
	}
	b = binary.LittleEndian.AppendUint16(b, 1)
	return binary.LittleEndian.AppendUint64(b, crc64.Checksum(b, fnCRC))
}

func decodeFunctionDump(p []byte) ([]string, bool) {
	if len(p) < 10 {
		return nil, false
	}
	body := p[:len(p)-8]
	if crc64.Checksum(body, fnCRC) != binary.LittleEndian.Uint64(p[len(p)-8:]) ||
		binary.LittleEndian.Uint16(body[len(body)-2:]) != 1 {
		return nil, false
	}
	body = body[:len(body)-2]
	var codes []string
	for len(body) > 0 {
		if body[0] != fnDumpOpcode {
			return nil, false
		}
		n, k := binary.Uvarint(body[1:])
		if k <= 0 || uint64(len(body)-1-k) < n {
			return nil, false
		}
		codes = append(codes, string(body[1+k:1+k+int(n)]))
		body = body[1+k+int(n):]
	}
	return codes, true
}

// snapshotFunctions emits FUNCTION LOAD for every library (full sync, AOF
// rewrite).
func (s *Server) snapshotFunctions(emit func(argv ...[]byte)) {
	if s.scripts.fns == nil {
		return
	}
	for _, l := range s.scripts.fns.sorted() {
		emit([]byte("FUNCTION"), []byte("LOAD"), []byte("REPLACE"), []byte(l.code))
	}
}

func functionEngines(c *Client, libs, funcs int) {
	c.BulkString("engines")
	c.Map(1)
	c.BulkString("LUA")
	c.Map(2)
	c.BulkString("libraries_count")
	c.Int(int64(libs))
	c.BulkString("functions_count")
	c.Int(int64(funcs))
}
