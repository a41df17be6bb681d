package server

// The scripting commands: EVAL, EVALSHA, SCRIPT, FCALL, FUNCTION.

import (
	"fmt"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

func cmdEval(c *Client, argv [][]byte) {
	c.feedScriptCall(argv)
	sc := c.s.scripts
	sha, fn, err := sc.compile(string(argv[1]))
	if err != nil {
		c.Error(err.Error())
		return
	}
	sc.run(c, sha, fn, argv, strings.HasSuffix(c.cmd.Name, "_ro"))
}

func cmdEvalSHA(c *Client, argv [][]byte) {
	c.feedScriptCall(argv)
	sc := c.s.scripts
	sha := strings.ToLower(string(argv[1]))
	fn, ok := sc.funcs[sha]
	if !ok {
		c.Error("NOSCRIPT No matching script. Please use EVAL.")
		return
	}
	sc.run(c, sha, fn, argv, strings.HasSuffix(c.cmd.Name, "_ro"))
}

func cmdScript(c *Client, argv [][]byte) {
	sc := c.s.scripts
	switch strings.ToUpper(string(argv[1])) {
	case "LOAD":
		sha, _, err := sc.compile(string(argv[2]))
		if err != nil {
			c.Error(err.Error())
			return
		}
		// Not propagated: Redis 7.0 replicates scripts by their effects,
		// so neither a replica nor the AOF needs the script itself.
		c.BulkString(sha)
	case "EXISTS":
		c.Array(len(argv) - 2)
		for _, a := range argv[2:] {
			if _, ok := sc.funcs[strings.ToLower(string(a))]; ok {
				c.Int(1)
			} else {
				c.Int(0)
			}
		}
	case "FLUSH":
		if len(argv) == 3 && !eq(argv[2], "async") && !eq(argv[2], "sync") {
			c.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
			return
		}
		sc.funcs = map[string]*lua.LFunction{}
		sc.bodies = map[string]string{}
		sc.shebangs = nil
		c.OK()
	case "KILL":
		c.Error("NOTBUSY No scripts in execution right now.")
	case "HELP":
		// Redis 7.0.15's text, DEBUG included (SCRIPT DEBUG, the Lua
		// debugger, is not implemented: an unknown subcommand here).
		helpReply(c, "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"DEBUG (YES|SYNC|NO)",
			"    Set the debug mode for subsequent scripts executed.",
			"EXISTS <sha1> [<sha1> ...]",
			"    Return information about the existence of the scripts in the script cache.",
			"FLUSH [ASYNC|SYNC]",
			"    Flush the Lua scripts cache. Very dangerous on replicas.",
			"    When called without the optional mode argument, the behavior is determined by the",
			"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
			"    * ASYNC: Asynchronously flush the scripts cache.",
			"    * SYNC: Synchronously flush the scripts cache.",
			"KILL",
			"    Kill the currently executing Lua script.",
			"LOAD <script>",
			"    Load a script into the scripts cache without executing it.",
			"HELP",
			"    Prints this help.")
	default:
		c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try SCRIPT HELP.")
	}
}

func cmdFCall(c *Client, argv [][]byte) {
	c.feedScriptCall(argv)
	s := c.s
	f := s.functions().funcs[strings.ToLower(string(argv[1]))]
	if f == nil {
		c.Error("ERR Function not found")
		return
	}
	numkeys, ok := parseInt(argv[2])
	if !ok {
		c.Error("ERR Bad number of keys provided")
		return
	}
	if numkeys > int64(len(argv)-3) {
		c.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	if numkeys < 0 {
		c.Error("ERR Number of keys can't be negative")
		return
	}
	ro := c.cmd != nil && c.cmd.Name == "fcall_ro"
	if e := scriptFlagsError(c, f.flags, true, ro); e != "" {
		c.Error(e)
		return
	}
	L := s.scripts.L
	keys := L.CreateTable(int(numkeys), 0)
	for i, k := range argv[3 : 3+numkeys] {
		keys.RawSetInt(i+1, lua.LString(string(k)))
	}
	args := L.CreateTable(len(argv)-3-int(numkeys), 0)
	for i, a := range argv[3+numkeys:] {
		args.RawSetInt(i+1, lua.LString(string(a)))
	}
	s.scripts.sandbox.globals.RawSetString("KEYS", lua.LNil)
	s.scripts.sandbox.globals.RawSetString("ARGV", lua.LNil)
	fl := s.scripts.fns
	bf := &busyFunction{name: f.name, libs: len(fl.libs), funcs: len(fl.funcs)}
	for _, a := range argv {
		bf.argv = append(bf.argv, string(a))
	}
	s.busy.mu.Lock()
	s.busy.fn = bf
	s.busy.mu.Unlock()
	s.scripts.allowOOM = f.flags&fnAllowOOM != 0
	s.scripts.call(c, f.name, "user_function", f.fn, ro || f.flags&fnNoWrites != 0, keys, args)
}

func cmdFunction(c *Client, argv [][]byte) {
	s := c.s
	fl := s.functions()
	sub := strings.ToUpper(string(argv[1]))
	switch {
	case sub == "LOAD":
		replace := false
		i := 2
		for ; i < len(argv)-1; i++ {
			if !eq(argv[i], "replace") {
				c.Error("ERR Unknown option given: " + cstr(argv[i]))
				return
			}
			replace = true
		}
		if i >= len(argv) {
			c.Error("ERR Function code is missing")
			return
		}
		lib, err := s.compileLibrary(string(argv[i]))
		if err == nil {
			err = fl.install(lib, replace)
		}
		if err != nil {
			c.Error(err.Error())
			return
		}
		s.dirty++
		s.propagate(c.db, argv)
		c.BulkString(lib.name)
	case sub == "DELETE" && len(argv) == 3:
		lib := fl.libs[strings.ToLower(string(argv[2]))]
		if lib == nil {
			c.Error("ERR Library not found")
			return
		}
		fl.remove(lib)
		s.dirty++
		s.propagate(c.db, argv)
		c.OK()
	case sub == "FLUSH" && len(argv) <= 3:
		if len(argv) == 3 && !eq(argv[2], "async") && !eq(argv[2], "sync") {
			c.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
		s.scripts.fns = nil
		s.functions()
		s.dirty++
		s.propagate(c.db, argv)
		c.OK()
	case sub == "LIST":
		functionList(c, fl, argv[2:])
	case sub == "DUMP" && len(argv) == 2:
		c.BulkString(string(fl.dump()))
	case sub == "RESTORE" && len(argv) <= 4:
		functionRestore(c, fl, argv)
	case sub == "STATS" && len(argv) == 2:
		c.Map(2)
		c.BulkString("running_script")
		// Only answered between scripts: a running script holds the lock
		// (Redis answers FUNCTION STATS during a busy script).
		c.Null()
		functionEngines(c, len(fl.libs), len(fl.funcs))
	case sub == "KILL" && len(argv) == 2:
		cmdScript(c, [][]byte{[]byte("SCRIPT"), []byte("KILL")})
	case sub == "HELP" && len(argv) == 2:
		c.Array(1)
		c.Simple("FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are: LOAD, DELETE, FLUSH, LIST, DUMP, RESTORE, STATS, KILL, HELP.")
	default:
		c.Error(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try FUNCTION HELP.", strings.ToLower(string(argv[1]))))
	}
}

func functionList(c *Client, fl *functionLibs, opts [][]byte) {
	withCode := false
	pattern := ""
	for i := 0; i < len(opts); i++ {
		switch {
		case eq(opts[i], "withcode") && !withCode:
			withCode = true
		case eq(opts[i], "libraryname") && pattern == "":
			if i+1 >= len(opts) {
				c.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern = string(opts[i])
		default:
			c.Error("ERR Unknown argument " + cstr(opts[i]))
			return
		}
	}
	var libs []*fnLibrary
	for _, l := range fl.sorted() {
		if pattern == "" || GlobMatch([]byte(pattern), []byte(l.name)) {
			libs = append(libs, l)
		}
	}
	c.Array(len(libs))
	for _, l := range libs {
		n := 3
		if withCode {
			n = 4
		}
		c.Map(n)
		c.BulkString("library_name")
		c.BulkString(l.name)
		c.BulkString("engine")
		c.BulkString("LUA")
		c.BulkString("functions")
		fs := append([]*luaFunction(nil), l.funcs...)
		sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
		c.Array(len(fs))
		for _, f := range fs {
			c.Map(3)
			c.BulkString("name")
			c.BulkString(f.name)
			c.BulkString("description")
			if f.desc == "" {
				c.Null()
			} else {
				c.BulkString(f.desc)
			}
			c.BulkString("flags")
			var names []string
			for i, fn := range fnFlagNames {
				if f.flags&(1<<i) != 0 {
					names = append(names, fn)
				}
			}
			c.SetHeader(len(names))
			for _, fn := range names {
				c.BulkString(fn)
			}
		}
		if withCode {
			c.BulkString("library_code")
			c.BulkString(l.code)
		}
	}
}

func functionRestore(c *Client, fl *functionLibs, argv [][]byte) {
	s := c.s
	policy := "APPEND"
	if len(argv) == 4 {
		policy = strings.ToUpper(string(argv[3]))
		if policy != "APPEND" && policy != "REPLACE" && policy != "FLUSH" {
			c.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	codes, ok := decodeFunctionDump(argv[2])
	if !ok {
		c.Error("ERR DUMP payload version or checksum are wrong")
		return
	}
	var libs []*fnLibrary
	for _, code := range codes {
		lib, err := s.compileLibrary(code)
		if err != nil {
			c.Error(err.Error())
			return
		}
		libs = append(libs, lib)
	}
	// Check everything before changing anything: a failed restore leaves
	// the libraries as they were.
	next := newFunctionLibs()
	if policy != "FLUSH" {
		for _, l := range fl.sorted() {
			next.install(l, false)
		}
	}
	for _, l := range libs {
		if err := next.install(l, policy == "REPLACE"); err != nil {
			if policy == "APPEND" && strings.Contains(err.Error(), "already exists") && next.libs[strings.ToLower(l.name)] != nil {
				err = fmt.Errorf("ERR Library %s already exists", l.name)
			}
			c.Error(err.Error())
			return
		}
	}
	fl.libs, fl.funcs = next.libs, next.funcs
	s.dirty++
	s.propagate(c.db, argv)
	c.OK()
}

// evalKeys are the keys of EVAL and FCALL: numkeys at argv[2], the keys
// after it.
func evalKeys(argv [][]byte) []int {
	if len(argv) < 3 {
		return nil
	}
	n, ok := parseInt(argv[2])
	if !ok || n <= 0 || n > int64(len(argv)-3) {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = 3 + i
	}
	return out
}

// evalFlags are the flags EVAL, EVALSHA and FCALL share (their _RO
// variants add readonly, the others may_replicate: CLIENT PAUSE WRITE
// holds them unless the script declares no-writes).
const evalFlags = FlagNoScript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys | FlagMovableKeys

// scriptingCommands are the scripting commands' specs (EVAL, SCRIPT, FCALL, FUNCTION).
func scriptingCommands() []*Command {
	return []*Command{
		newCmd("eval", -3, evalFlags|FlagMayReplicate, 0, 0, 0, cmdEval, "scripting").withKeys(evalKeys),
		newCmd("evalsha", -3, evalFlags|FlagMayReplicate, 0, 0, 0, cmdEvalSHA, "scripting").withKeys(evalKeys),
		newCmd("eval_ro", -3, evalFlags|FlagReadonly, 0, 0, 0, cmdEval, "scripting").withKeys(evalKeys),
		newCmd("evalsha_ro", -3, evalFlags|FlagReadonly, 0, 0, 0, cmdEvalSHA, "scripting").withKeys(evalKeys),
		newCmd("script", -2, 0, 0, 0, 0, cmdScript, "scripting").withSubs(
			sub("load", 3, FlagNoScript|FlagStale), sub("exists", -3, FlagNoScript), sub("flush", -2, FlagNoScript),
			sub("kill", 2, FlagNoScript|FlagAllowBusy), sub("help", 2, FlagLoading|FlagStale)),
		newCmd("fcall", -3, evalFlags|FlagMayReplicate, 0, 0, 0, cmdFCall, "scripting").withKeys(evalKeys),
		newCmd("fcall_ro", -3, evalFlags|FlagReadonly, 0, 0, 0, cmdFCall, "scripting").withKeys(evalKeys),
		newCmd("function", -2, 0, 0, 0, 0, cmdFunction, "scripting").withSubs(
			sub("load", -3, FlagWrite|FlagDenyOOM|FlagNoScript), sub("delete", 3, FlagWrite|FlagNoScript),
			sub("flush", -2, FlagWrite|FlagNoScript), sub("list", -2, FlagNoScript), sub("dump", 2, FlagNoScript),
			sub("restore", -3, FlagWrite|FlagDenyOOM|FlagNoScript), sub("stats", 2, FlagNoScript|FlagAllowBusy),
			sub("kill", 2, FlagNoScript|FlagAllowBusy), sub("help", 2, FlagLoading|FlagStale)),
	}
}
