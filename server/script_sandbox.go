package server

import (
	"runtime/metrics"

	lua "github.com/yuin/gopher-lua"
)

// Script isolation. Redis 7.0 marks the globals table and every table
// reachable from it read-only (a flag its patched Lua checks on every
// write) and makes a read of an undefined global an error, so that no
// script can break scripting for the others (`redis = nil`) or leave state
// behind for the next one. gopher-lua has no such flag, so the same effect
// is built from proxies: every protected table is reached only through an
// empty table whose metatable reads from the real one and refuses writes.
// The builtins that bypass metatables (rawset, rawget, next, pairs,
// setmetatable) are wrapped to see through or refuse proxies. Writes that
// still land in a proxy's own slots (table.insert(_G, x)) are wiped after
// every script.

// errReadonly is Redis's message for a write to a protected table.
const errReadonly = "Attempt to modify a readonly table"

// luaGlobals are the globals Redis 7.0 gives EVAL scripts (its allow list
// minus what it removes after start: print, getfenv, setfenv, newproxy,
// debug are absent).
var luaGlobals = []string{
	"string", "math", "table", "coroutine", "redis", "bit", "cjson", "cmsgpack", "struct",
	"xpcall", "tostring", "setmetatable", "next", "assert", "tonumber",
	"rawequal", "collectgarbage", "getmetatable", "rawset", "pcall", "type",
	"select", "unpack", "gcinfo", "pairs", "rawget", "loadstring", "ipairs",
	"_VERSION", "load", "error",
}

func newLuaSandbox(L *lua.LState) *luaSandbox {
	sb := &luaSandbox{L: L, guarded: map[*lua.LTable]*lua.LTable{}}
	sb.newindex = L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	})
	real := L.G.Global
	// gcinfo and collectgarbage("count") report the heap in KB as Redis's
	// do; no script may force a collection of the whole server's heap.
	heapKB := L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(heapBytes() / 1024))
		return 1
	})
	real.RawSetString("gcinfo", heapKB)
	real.RawSetString("collectgarbage", L.NewFunction(func(L *lua.LState) int {
		if L.OptString(1, "collect") == "count" {
			return heapKB.GFunction(L)
		}
		L.Push(lua.LNumber(0))
		return 1
	}))
	sb.wrapBuiltins(real)
	sb.globals = L.NewTable()
	for _, name := range luaGlobals {
		v := real.RawGetString(name)
		if t, ok := v.(*lua.LTable); ok {
			v = sb.protect(t)
		}
		sb.globals.RawSetString(name, v)
	}
	// A read of a global that does not exist is an error, as in Redis.
	missing := L.NewTable()
	missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.CheckString(2))
		return 0
	}))
	L.SetMetatable(sb.globals, missing)
	sb.env = sb.protect(sb.globals)
	// getmetatable(_G) is a (protected) table in Redis too.
	sb.env.Metatable.(*lua.LTable).RawSetString("__metatable", sb.protect(missing))
	sb.globals.RawSetString("_G", sb.env)
	// Strings index their library through their metatable: point it at the
	// proxy, and let getmetatable("") see only a protected copy.
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", sb.globals.RawGetString("string"))
	strMeta.RawSetString("__metatable", sb.protect(strMeta))
	L.SetMetatable(lua.LString(""), strMeta)
	// Chunks compiled from now on (scripts, loadstring) see env as _G.
	L.Env = sb.env
	return sb
}

// protect returns the read-only proxy of t.
func (sb *luaSandbox) protect(t *lua.LTable) *lua.LTable {
	L := sb.L
	for p, g := range sb.guarded {
		if g == t {
			return p
		}
	}
	p := L.NewTable()
	sb.guarded[p] = t
	// Library tables may hold tables (cjson.null aside, none today); guard
	// them too so no path leads to a writable table.
	t.ForEach(func(k, v lua.LValue) {
		if sub, ok := v.(*lua.LTable); ok && sub != t {
			if _, isProxy := sb.guarded[sub]; !isProxy {
				t.RawSet(k, sb.protect(sub))
			}
		}
	})
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", sb.newindex)
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(p, mt)
	return p
}

// unwrap returns the table a proxy guards, or t itself.
func (sb *luaSandbox) unwrap(t *lua.LTable) *lua.LTable {
	if g, ok := sb.guarded[t]; ok {
		return g
	}
	return t
}

// wrapBuiltins replaces the builtins that bypass metatables.
func (sb *luaSandbox) wrapBuiltins(g *lua.LTable) {
	L := sb.L
	refuse := func(L *lua.LState, t *lua.LTable) {
		if _, ok := sb.guarded[t]; ok {
			L.Error(lua.LString(errReadonly), 0)
		}
	}
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		refuse(L, t)
		L.RawSet(t, L.CheckAny(2), L.CheckAny(3))
		L.SetTop(1)
		return 1
	}))
	g.RawSetString("rawget", L.NewFunction(func(L *lua.LState) int {
		L.Push(L.RawGet(sb.unwrap(L.CheckTable(1)), L.CheckAny(2)))
		return 1
	}))
	next := L.NewFunction(func(L *lua.LState) int {
		t := sb.unwrap(L.CheckTable(1))
		k, v := t.Next(L.Get(2))
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(v)
		return 2
	})
	g.RawSetString("next", next)
	g.RawSetString("pairs", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		L.Push(next)
		L.Push(t)
		L.Push(lua.LNil)
		return 3
	}))
	// The table library writes raw too.
	tab := g.RawGetString("table").(*lua.LTable)
	for _, name := range []string{"insert", "remove", "sort", "setn"} {
		fn, ok := tab.RawGetString(name).(*lua.LFunction)
		if !ok {
			continue
		}
		tab.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok {
				refuse(L, t)
			}
			return fn.GFunction(L)
		}))
	}
	// Redis 7's pcall hands back the message of an error table (what
	// redis.call raises) rather than the table, as older versions did.
	pcall := g.RawGetString("pcall").(*lua.LFunction)
	g.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int {
		n := pcall.GFunction(L)
		if n >= 2 && L.Get(-n) == lua.LFalse {
			if t, ok := L.Get(-n + 1).(*lua.LTable); ok {
				if msg, ok := t.RawGetString("err").(lua.LString); ok {
					L.Replace(-n+1, msg)
				}
			}
		}
		return n
	}))
	setmt := g.RawGetString("setmetatable").(*lua.LFunction)
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok {
			refuse(L, t)
		}
		return setmt.GFunction(L)
	}))
}

// setArgs stores KEYS and ARGV for the next run.
func (sb *luaSandbox) setArgs(keys, args *lua.LTable) {
	sb.globals.RawSetString("KEYS", keys)
	sb.globals.RawSetString("ARGV", args)
}

// wipe removes what a script managed to store in a proxy's own slots
// (through table.insert and other raw writes), so it cannot reach the next
// script.
func (sb *luaSandbox) wipe() {
	for p := range sb.guarded {
		if k, _ := p.Next(lua.LNil); k != lua.LNil {
			var keys []lua.LValue
			p.ForEach(func(k, _ lua.LValue) { keys = append(keys, k) })
			for _, k := range keys {
				p.RawSet(k, lua.LNil)
			}
		}
	}
}

// heapBytes reads the Go heap size without stopping the world.
func heapBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}
