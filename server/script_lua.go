package server

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/redline-dev/redline/server/acl"
	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/resp"
)

func newScripting(s *Server) *scripting {
	L := lua.NewState(lua.Options{
		SkipOpenLibs: true,
		// Lua 5.1's C stack holds LUAI_MAXCSTACK (8000) values, so Redis's
		// scripts may unpack a 7999-element table into one redis.call
		// (unit/scripting "unpack with massive arguments"); gopher-lua's
		// fixed 5120-slot registry overflowed there. The registry grows
		// in steps of 1024 up to 1M slots (16 MB), enough for recursion
		// as deep as the call stack allows.
		RegistrySize:     luaRegistrySize,
		RegistryMaxSize:  luaRegistryMaxSize,
		RegistryGrowStep: 1024,
	})
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	sc := &scripting{s: s, L: L, bodies: map[string]string{}, funcs: map[string]*lua.LFunction{}}
	sc.fake = s.newClient(nil)
	sc.fake.inScript = true
	sc.fake.authenticated = true
	redis := L.NewTable()
	L.SetFuncs(redis, map[string]lua.LGFunction{
		"call":  func(L *lua.LState) int { return sc.redisCall(L, true) },
		"pcall": func(L *lua.LState) int { return sc.redisCall(L, false) },
		"status_reply": func(L *lua.LState) int {
			t := L.NewTable()
			if s, ok := L.Get(1).(lua.LString); ok && L.GetTop() == 1 {
				t.RawSetString("ok", s)
			} else {
				t.RawSetString("err", lua.LString("ERR wrong number or type of arguments"))
			}
			L.Push(t)
			return 1
		},
		"error_reply": func(L *lua.LState) int {
			t := L.NewTable()
			s, ok := L.Get(1).(lua.LString)
			if !ok || L.GetTop() != 1 {
				t.RawSetString("err", lua.LString("ERR wrong number or type of arguments"))
				L.Push(t)
				return 1
			}
			msg := strings.TrimPrefix(string(s), "-")
			if !strings.Contains(msg, " ") {
				msg = "ERR " + msg
			}
			t.RawSetString("err", lua.LString(msg))
			L.Push(t)
			return 1
		},
		"sha1hex": func(L *lua.LState) int {
			// luaRedisSha1hexCommand: one argument, taken as lua_tolstring
			// does (a number as its text, anything else as nothing).
			if L.GetTop() != 1 {
				t := L.NewTable()
				t.RawSetString("err", lua.LString("ERR wrong number of arguments"))
				t.RawSetString("__line", lua.LString(luaLine(L.Where(1))))
				L.Error(t, 1)
				return 0
			}
			L.Push(lua.LString(sha1hex(lua.LVAsString(L.Get(1)))))
			return 1
		},
		"acl_check_cmd":      func(L *lua.LState) int { return sc.aclCheckCmd(L) },
		"log":                func(L *lua.LState) int { return 0 },
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"set_repl":           func(L *lua.LState) int { return 0 },
		"setresp": func(L *lua.LState) int {
			v := L.CheckInt(1)
			if v != 2 && v != 3 {
				L.RaiseError("RESP version must be 2 or 3.")
			}
			sc.fake.proto = v
			return 0
		},
	})
	for i, n := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		redis.RawSetString(n, lua.LNumber(i))
	}
	for i, n := range []string{"REPL_NONE", "REPL_AOF", "REPL_SLAVE", "REPL_REPLICA", "REPL_ALL"} {
		_ = i
		redis.RawSetString(n, lua.LNumber(map[string]int{"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3}[n]))
	}
	redis.RawSetString("REDIS_VERSION", lua.LString(config.Version))
	redis.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(config.Version)))
	L.SetGlobal("redis", redis)
	L.SetGlobal("bit", newBitLib(L))
	L.SetGlobal("cjson", newCJSONLib(L))
	L.SetGlobal("cmsgpack", newCMsgpackLib(L))
	L.SetGlobal("struct", newStructLib(L))
	installLuaBasics(L)
	installRedisRandom(L, newRedisRand48())
	installLuaFormat(L)
	L.G.Global.RawGetString("math").(*lua.LTable).RawSetString("huge", lua.LNumber(math.Inf(1)))
	sc.sandbox = newLuaSandbox(L)
	return sc
}

const (
	luaRegistrySize    = 256 * 20
	luaRegistryMaxSize = 1 << 20
)

// luaLine extracts N from "user_script:N: ..." (gopher-lua's Where format).
func luaLine(where string) string {
	where = strings.TrimPrefix(where, "@")
	where = strings.TrimPrefix(where, "user_script:")
	where = strings.TrimPrefix(where, "user_function:")
	if i := strings.IndexByte(where, ':'); i > 0 {
		return where[:i]
	}
	return "1"
}

var gopherParseError = regexp.MustCompile(`^user_script (?:line:(\d+)\(column:\d+\) near '(.*)'|at EOF):\s+(.*?)\s*$`)

// luaCompileError rewrites gopher-lua's parse error in Lua 5.1's form,
// "user_script:LINE: MESSAGE near 'TOKEN'", as far as the two parsers'
// vocabularies map onto each other.
func luaCompileError(msg, body string) string {
	m := gopherParseError.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	line, near := m[1], m[2]
	if line == "" {
		line, near = strconv.Itoa(strings.Count(body, "\n")+1), "<eof>"
	}
	what := m[3]
	switch what {
	case "unterminated string":
		what = "unfinished string"
	case "syntax error", "parse error":
		what = "unexpected symbol"
	}
	return "user_script:" + line + ": " + what + " near '" + near + "'"
}

// luaRuntimeError rewrites gopher-lua's runtime error texts in Lua 5.1's
// words where they differ. gopher-lua does not say what it tried to call;
// the value is nil in nearly every script that gets there (a global is
// refused earlier by the sandbox), so Lua 5.1's text for nil is used.
//
// luaL_argerror quotes the function's name ("bad argument #1 to
// 'random' (...)"); gopher-lua does not.
func luaRuntimeError(msg string) string {
	msg = strings.Replace(msg, "attempt to call a non-function object", "attempt to call a nil value", 1)
	return gopherArgError.ReplaceAllString(msg, "bad argument #$1 to '$2' (")
}

var gopherArgError = regexp.MustCompile(`bad argument #(\d+) to ([A-Za-z_][A-Za-z0-9_]*) \(`)

// versionNum is Redis's REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNum(v string) int {
	var major, minor, patch int
	fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch)
	return major<<16 | minor<<8 | patch
}

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// redisCall implements redis.call (raise=true) and redis.pcall.
func (sc *scripting) redisCall(L *lua.LState, raise bool) int {
	n := L.GetTop()
	// failWith raises (redis.call) or returns (redis.pcall) an error
	// table. counted: the error is in the error stats already, where it
	// happened (as Redis's scriptCall counts it), and the table says so
	// (ignore_error_stats_update), so the script's reply is not counted
	// again.
	failWith := func(msg string, counted bool) int {
		t := L.NewTable()
		t.RawSetString("err", lua.LString(msg))
		t.RawSetString("__line", lua.LString(luaLine(L.Where(1))))
		if counted {
			t.RawSetString("ignore_error_stats_update", lua.LTrue)
		}
		if raise {
			L.Error(t, 1)
			return 0
		}
		L.Push(t)
		return 1
	}
	fail := func(msg string) int { return failWith(msg, false) }
	// refuse is an error of scriptCall's checks: counted here.
	refuse := func(msg string) int {
		st := &sc.s.stats
		st.errorReplies++
		st.errSeen = st.errorReplies // the refused command's, not the script's failure (call.go)
		sc.s.countError(msg)
		return failWith(msg, true)
	}
	if n == 0 {
		return fail("ERR Please specify at least one argument for this redis lib call")
	}
	argv := make([][]byte, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			argv[i-1] = []byte(string(v))
		case lua.LNumber:
			// Redis passes numbers as "%.17g": 0.1 is 0.10000000000000001.
			argv[i-1] = strconv.AppendFloat(nil, float64(v), 'g', 17, 64)
		default:
			return fail("ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	s := sc.s
	cmd := s.Lookup(argv[0])
	if cmd == nil {
		return refuse("ERR Unknown Redis command called from script")
	}
	// As scriptCall: a container's subcommand is the command whose arity
	// and flags count (CLUSTER RESET is noscript, CLUSTER INFO is not),
	// and an unknown subcommand is an unknown command.
	target := cmd
	if len(cmd.Subcommands) > 0 && n > 1 {
		if target = cmd.subcommand(argv); target == nil {
			return refuse("ERR Unknown Redis command called from script")
		}
	}
	// A command the script may not run counts as rejected in its
	// commandstats (scriptCall's incrCommandStatsOnError).
	reject := func(msg string) int {
		cmd.rejected++ // commandstats are the container's here
		return refuse(msg)
	}
	if !checkArity(target.Arity, len(argv)) {
		return reject("ERR Wrong number of args calling Redis command from script")
	}
	if target.Flags&FlagNoScript != 0 && !s.debug.allowDeniedInScripts {
		return reject("ERR This Redis command is not allowed from script")
	}
	f := sc.fake
	if e := f.aclScriptRefusal(cmd, argv); e != "" {
		return reject(e)
	}
	// A may-replicate command (PUBLISH, PFCOUNT) counts as a write, so a
	// read-only script can run during CLIENT PAUSE WRITE (Redis's
	// scriptVerifyWriteCommandAllow).
	if sc.readOnly && target.Flags&(FlagWrite|FlagMayReplicate) != 0 {
		return reject("ERR Write commands are not allowed from read-only scripts.")
	}
	f.out = f.out[:0]
	if e := s.refusal(f, cmd, argv); e != "" {
		return reject(e)
	}
	f.cmd = cmd
	if target.Flags&FlagWrite != 0 {
		sc.s.busy.wrote.Store(true)
	}
	f.exec(cmd, argv)
	v, _, err := resp.ReadReply(f.out)
	if err != nil {
		return fail("ERR internal reply error")
	}
	if v.Kind == resp.KindError {
		return failWith(string(v.Str), true) // the fake client's reply counted it
	}
	L.Push(sc.toLua(v))
	return 1
}

// toLua converts a reply to a Lua value with Redis's rules.
func (sc *scripting) toLua(v resp.Value) lua.LValue {
	L := sc.L
	switch v.Kind {
	case resp.KindInt:
		return lua.LNumber(v.Int)
	case resp.KindBulk:
		if v.Format != "" {
			t := L.NewTable()
			vt := L.NewTable()
			vt.RawSetString("string", lua.LString(string(v.Str)))
			vt.RawSetString("format", lua.LString(v.Format))
			t.RawSetString("verbatim_string", vt)
			return t
		}
		return lua.LString(string(v.Str))
	case resp.KindBigNum:
		t := L.NewTable()
		t.RawSetString("big_number", lua.LString(string(v.Str)))
		return t
	case resp.KindSimple:
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(string(v.Str)))
		return t
	case resp.KindError:
		t := L.NewTable()
		t.RawSetString("err", lua.LString(string(v.Str)))
		return t
	case resp.KindNull:
		if sc.fake.proto == 3 {
			return lua.LNil
		}
		return lua.LFalse
	case resp.KindBool:
		return lua.LBool(v.Int == 1)
	case resp.KindDouble:
		t := L.NewTable()
		f, _ := parseFloat(v.Str)
		t.RawSetString("double", lua.LNumber(f))
		return t
	case resp.KindMap:
		t := L.NewTable()
		m := L.NewTable()
		for i := 0; i+1 < len(v.Elems); i += 2 {
			m.RawSet(sc.toLua(v.Elems[i]), sc.toLua(v.Elems[i+1]))
		}
		t.RawSetString("map", m)
		return t
	case resp.KindSet:
		t := L.NewTable()
		m := L.NewTable()
		for _, e := range v.Elems {
			m.RawSet(sc.toLua(e), lua.LTrue)
		}
		t.RawSetString("set", m)
		return t
	default: // arrays
		t := L.NewTable()
		for i, e := range v.Elems {
			t.RawSetInt(i+1, sc.toLua(e))
		}
		return t
	}
}

// reply writes a Lua value as a RESP reply with Redis's rules.
func (sc *scripting) reply(c *Client, v lua.LValue, depth int) {
	if depth > 1000 {
		c.Error("ERR reached lua stack limit")
		return
	}
	switch x := v.(type) {
	case lua.LNumber:
		c.Int(int64(math.Trunc(float64(x))))
	case lua.LString:
		c.BulkString(string(x))
	case lua.LBool:
		// luaReplyToRedisReply: a boolean is 1 or nil while the script
		// speaks RESP2 (redis.setresp), a boolean reply under RESP3.
		switch {
		case sc.fake.proto == 3:
			c.boolReply(bool(x))
		case bool(x):
			c.Int(1)
		default:
			c.Null()
		}
	case *lua.LTable:
		if e := x.RawGetString("err"); e.Type() == lua.LTString {
			scriptError(c, x, string(e.(lua.LString)))
			return
		}
		if ok := x.RawGetString("ok"); ok.Type() == lua.LTString {
			c.Simple(string(ok.(lua.LString)))
			return
		}
		if d := x.RawGetString("double"); d.Type() == lua.LTNumber {
			c.Double(float64(d.(lua.LNumber)))
			return
		}
		if n, ok := x.RawGetString("big_number").(lua.LString); ok {
			num := strings.NewReplacer("\r", " ", "\n", " ").Replace(string(n))
			if c.proto == 3 {
				c.out = resp.AppendBigNumber(c.out, num)
			} else {
				c.BulkString(num)
			}
			return
		}
		if vt, ok := x.RawGetString("verbatim_string").(*lua.LTable); ok {
			format, okf := vt.RawGetString("format").(lua.LString)
			str, oks := vt.RawGetString("string").(lua.LString)
			if okf && oks {
				if c.proto == 3 {
					// addReplyVerbatim: the format is three characters,
					// padded with spaces.
					c.out = resp.AppendVerbatim(c.out, (string(format) + "   ")[:3], string(str))
				} else {
					c.BulkString(string(str))
				}
				return
			}
		}
		if m, ok := x.RawGetString("map").(*lua.LTable); ok {
			var keys, vals []lua.LValue
			m.ForEach(func(k, v lua.LValue) { keys, vals = append(keys, k), append(vals, v) })
			c.Map(len(keys))
			for i := range keys {
				sc.reply(c, keys[i], depth+1)
				sc.reply(c, vals[i], depth+1)
			}
			return
		}
		if set, ok := x.RawGetString("set").(*lua.LTable); ok {
			var keys []lua.LValue
			set.ForEach(func(k, _ lua.LValue) { keys = append(keys, k) })
			c.SetHeader(len(keys))
			for _, k := range keys {
				sc.reply(c, k, depth+1)
			}
			return
		}
		var elems []lua.LValue
		for i := 1; ; i++ {
			e := x.RawGetInt(i)
			if e == lua.LNil {
				break
			}
			elems = append(elems, e)
		}
		c.Array(len(elems))
		for _, e := range elems {
			sc.reply(c, e, depth+1)
		}
	default:
		c.Null()
	}
}

func (sc *scripting) compile(body string) (string, *lua.LFunction, error) {
	sha := sha1hex(body)
	if fn, ok := sc.funcs[sha]; ok {
		return sha, fn, nil
	}
	code, flags, declared, err := scriptShebang(body)
	if err != nil {
		return sha, nil, err
	}
	fn, err := sc.L.Load(strings.NewReader(code), "user_script")
	if err != nil {
		return sha, nil, errors.New("ERR Error compiling script (new function): " + luaCompileError(err.Error(), code))
	}
	sc.funcs[sha] = fn
	sc.bodies[sha] = body
	if declared {
		if sc.shebangs == nil {
			sc.shebangs = map[string]uint8{}
		}
		sc.shebangs[sha] = flags
	}
	return sha, fn, nil
}

func (sc *scripting) run(c *Client, sha string, fn *lua.LFunction, argv [][]byte, readOnly bool) {
	flags, declared := sc.shebangs[sha]
	if e := scriptFlagsError(c, flags, declared, readOnly); e != "" {
		c.Error(e)
		return
	}
	readOnly = readOnly || flags&fnNoWrites != 0
	sc.allowOOM = flags&fnAllowOOM != 0
	numkeys, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if numkeys < 0 {
		c.Error("ERR Number of keys can't be negative")
		return
	}
	if numkeys > int64(len(argv)-3) {
		c.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	L := sc.L
	keys := L.NewTable()
	for i, k := range argv[3 : 3+numkeys] {
		keys.RawSetInt(i+1, lua.LString(string(k)))
	}
	args := L.NewTable()
	for i, a := range argv[3+numkeys:] {
		args.RawSetInt(i+1, lua.LString(string(a)))
	}
	sc.sandbox.setArgs(keys, args)
	if t := sc.s.trk; t != nil {
		t.scriptKeys = argv[3 : 3+numkeys] // tracking: a script's reads track its declared keys
		defer func() { t.scriptKeys = nil }()
	}
	sc.call(c, sha, "user_script", fn, readOnly)
}

// call runs fn (a script body with no parameters, or a function called
// with params) for c and writes its reply. name and chunk name the script
// in errors ("script: <name>, on @<chunk>:<line>.").
func (sc *scripting) call(c *Client, name, chunk string, fn *lua.LFunction, readOnly bool, params ...lua.LValue) {
	L := sc.L
	sc.caller = c
	sc.fake.user = c.user // redis.call runs with the caller's permissions
	sc.readOnly = readOnly
	sc.fake.proto = 2
	// The script starts in the caller's database; a SELECT inside it does
	// not change the caller's (Redis 7).
	sc.fake.db = c.db
	sc.s.beginBlock()
	// Time stands still while a script runs, as Redis's script time
	// snapshot: a key that expires during the script is there until it
	// ends (the script's commands do not tick the clock, call.go).
	for _, db := range sc.s.dbs {
		db.Tick()
	}
	kctx, cancel := context.WithCancel(context.Background())
	L.SetContext(kctx)
	sc.s.busy.begin(cancel)
	L.Push(fn)
	for _, p := range params {
		L.Push(p)
	}
	err := L.PCall(len(params), 1, nil)
	killed := sc.s.busy.end()
	cancel()
	L.RemoveContext()
	sc.sandbox.wipe()
	sc.s.endBlock()
	if killed {
		L.SetTop(0)
		c.Error("ERR Script killed by user with SCRIPT KILL...")
		return
	}
	if err != nil {
		var ae *lua.ApiError
		if errors.As(err, &ae) {
			if t, ok := ae.Object.(*lua.LTable); ok {
				if e := t.RawGetString("err"); e.Type() == lua.LTString {
					line := "1"
					if l, ok := t.RawGetString("__line").(lua.LString); ok {
						line = string(l)
					}
					scriptError(c, t, fmt.Sprintf("%s script: %s, on @%s:%s.", string(e.(lua.LString)), name, chunk, line))
					return
				}
			}
			msg := luaRuntimeError(strings.TrimPrefix(ae.Object.String(), "@"))
			c.Error(fmt.Sprintf("ERR %s script: %s, on @%s:%s.", msg, name, chunk, luaLine(msg)))
			return
		}
		c.Error("ERR Error running script: " + err.Error())
		return
	}
	ret := L.Get(-1)
	L.Pop(1)
	sc.reply(c, ret, 0)
}

// counts are INFO memory's number_of_cached_scripts, number_of_functions
// and number_of_libraries.
func (sc *scripting) counts() (scripts, funcs, libs int) {
	if sc == nil {
		return 0, 0, 0
	}
	if sc.fns != nil {
		funcs, libs = len(sc.fns.funcs), len(sc.fns.libs)
	}
	return len(sc.bodies), funcs, libs
}

// aclCheckCmd is redis.acl_check_cmd(cmd, args...): whether the script's
// caller may run the command with these arguments (its ACL user's command,
// key and channel rules), without running it.
func (sc *scripting) aclCheckCmd(L *lua.LState) int {
	raise := func(msg string) int {
		t := L.NewTable()
		t.RawSetString("err", lua.LString(msg))
		t.RawSetString("__line", lua.LString(luaLine(L.Where(1))))
		L.Error(t, 1)
		return 0
	}
	n := L.GetTop()
	if n == 0 {
		return raise("ERR Please specify at least one argument for this redis lib call")
	}
	argv := make([][]byte, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			argv[i-1] = []byte(string(v))
		case lua.LNumber:
			argv[i-1] = strconv.AppendFloat(nil, float64(v), 'g', 17, 64)
		default:
			return raise("ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	cmd := sc.s.Lookup(argv[0])
	if cmd != nil && len(cmd.Subcommands) > 0 && n > 1 && cmd.subcommand(argv) == nil {
		cmd = nil
	}
	if cmd == nil {
		return raise("ERR Invalid command passed to redis.acl_check_cmd()")
	}
	res, _ := sc.fake.aclCheck(cmd, argv)
	L.Push(lua.LBool(res == acl.OK))
	return 1
}

// scriptError replies a script's error table t as msg, counted in the
// error stats unless t's error was counted where it happened
// (ignore_error_stats_update, Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE).
func scriptError(c *Client, t *lua.LTable, msg string) {
	if t.RawGetString("ignore_error_stats_update") == lua.LTrue {
		// Not counted again, but the script's command failed
		// (afterErrorReply's realcmd->failed_calls++).
		if c.cmd != nil {
			c.cmd.fails++
		}
		c.out = resp.AppendError(c.out, msg)
		return
	}
	c.Error(msg)
}
