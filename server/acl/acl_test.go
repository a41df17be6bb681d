package acl

import (
	"path"
	"strings"
	"testing"
)

// testACL has a small catalog: get/set (string), hget/hset (hash),
// config (admin container with get/set), publish (pubsub).
func testACL() *ACL {
	k := NewCatalog()
	k.Add("get", []string{"@read", "@string", "@fast"}, false, nil)
	k.Add("set", []string{"@write", "@string", "@slow"}, false, nil)
	k.Add("hget", []string{"@read", "@hash", "@fast"}, false, nil)
	k.Add("hset", []string{"@write", "@hash", "@fast"}, false, nil)
	cfg := k.Add("config", []string{"@slow"}, false, nil)
	k.Add("get", []string{"@admin", "@slow", "@dangerous"}, false, cfg)
	k.Add("set", []string{"@admin", "@slow", "@dangerous"}, false, cfg)
	k.Add("publish", []string{"@pubsub", "@fast"}, false, nil)
	k.Add("auth", []string{"@fast", "@connection"}, true, nil)
	glob := func(p, s []byte) bool { ok, _ := path.Match(string(p), string(s)); return ok }
	return New(k, glob)
}

func set(t *testing.T, a *ACL, name string, rules ...string) {
	t.Helper()
	if err := a.SetUser(name, rules, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeFindsTheSmallestRules(t *testing.T) {
	a := testACL()
	for _, c := range []struct {
		rules []string
		want  string
	}{
		{nil, "off resetchannels -@all"},
		{[]string{"on", "nopass", "~*", "&*", "+@all"}, "on nopass ~* &* +@all"},
		{[]string{"+@all", "-@hash"}, "off resetchannels +@all -@hash"},
		{[]string{"+@read", "-hget"}, "off resetchannels -@all +get"},                   // one of two: +get is shorter
		{[]string{"+@read", "+@write", "-hset"}, "off resetchannels -@all +@read +set"}, // @read wins the tie with @string (table order)
		{[]string{"+config|get", "%R~r:*", "~k", "&ch"}, "off %R~r:* ~k resetchannels &ch -@all +config|get"},
		{[]string{"reset", "+@all", "-config"}, "off sanitize-payload resetchannels +@all -@admin -config"},
	} {
		a.users = map[string]*User{"default": a.Default}
		set(t, a, "u", c.rules...)
		if got := a.Describe(a.User("u")); got != c.want {
			t.Errorf("%q: described %q, want %q", c.rules, got, c.want)
		}
	}
}

func TestSetUserIsAllOrNothing(t *testing.T) {
	a := testACL()
	set(t, a, "u", "on", "+get")
	err := a.SetUser("u", []string{"+set", "+nosuch"}, nil)
	if err == nil || err.Error() != "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL" {
		t.Fatalf("error %v", err)
	}
	if got := a.Describe(a.User("u")); got != "on resetchannels -@all +get" {
		t.Fatalf("a failed SETUSER changed the user: %q", got)
	}
	if err := a.SetUser("v", []string{"(+get", "~x"}, nil); err == nil || !strings.Contains(err.Error(), "Unmatched parenthesis") {
		t.Fatalf("unclosed selector: %v", err)
	}
	if a.User("v") != nil {
		t.Fatal("a failed SETUSER created the user")
	}
}

func TestCheckAcrossSelectors(t *testing.T) {
	a := testACL()
	set(t, a, "u", "on", "%R~r:*", "+get", "(~w:* +set)")
	u := a.User("u")
	req := func(cmd string, perm int, key string) Request {
		argv := [][]byte{[]byte(cmd), []byte(key)}
		return Request{Cmd: a.cat.Lookup(cmd), Argv: argv, Keys: func() []Key { return []Key{{1, perm}} }}
	}
	for _, c := range []struct {
		r    Request
		want Result
	}{
		{req("get", PermRead, "r:1"), OK},
		{req("get", PermRead, "w:1"), DeniedKey}, // the selector with w:* has no get
		{req("set", PermAll, "w:1"), OK},
		{req("set", PermAll, "r:1"), DeniedKey},
		{req("hget", PermRead, "r:1"), DeniedCmd},
	} {
		if got, _ := a.Check(u, c.r); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.r.Argv[0], c.r.Argv[1], got, c.want)
		}
	}
	if got, _ := a.Check(u, Request{Cmd: a.cat.Lookup("auth"), Argv: [][]byte{[]byte("auth"), []byte("x")}}); got != OK {
		t.Errorf("auth: %v: no_auth commands need no permission", got)
	}
	pub := Request{Cmd: a.cat.Lookup("publish"), Argv: [][]byte{[]byte("publish"), []byte("ch")},
		Channels: func() []Channel { return []Channel{{Pos: 1}} }}
	set(t, a, "p", "on", "+publish", "allkeys")
	if got, pos := a.Check(a.User("p"), pub); got != DeniedChannel || pos != 1 {
		t.Fatalf("publish without channels: %v at %d", got, pos)
	}
}

func TestLoadKeepsTheOldUsersOnError(t *testing.T) {
	a := testACL()
	set(t, a, "keep", "on")
	if _, err := a.Load("user a on +get\nuser b on +nosuch\n", "users.acl"); err == nil ||
		!strings.Contains(err.Error(), "users.acl:2: Error in applying operation '+nosuch'") {
		t.Fatalf("error %v", err)
	}
	if a.User("keep") == nil || a.User("a") != nil {
		t.Fatal("a failed load changed the users")
	}
	def := a.Default
	gone, err := a.Load("user default on nopass ~* +get\nuser a on >pw\n", "users.acl")
	if err != nil || len(gone) != 1 || gone[0].Name != "keep" {
		t.Fatalf("load: gone %v, %v", gone, err)
	}
	if a.Default != def || a.Describe(def) != "on nopass ~* resetchannels -@all +get" {
		t.Fatalf("the default user lost its identity or rules: %q", a.Describe(a.Default))
	}
	if a.Authenticate("a", []byte("pw")) == nil || a.Authenticate("a", []byte("no")) != nil {
		t.Fatal("password of a loaded user")
	}
}

func TestLogGroupsEqualEntries(t *testing.T) {
	var l Log
	l.Max = 2
	e := LogEntry{Reason: "key", Context: "toplevel", Object: "k", Username: "u"}
	l.Add(e, 1000)
	l.Add(e, 2000)
	if len(l.Entries) != 1 || l.Entries[0].Count != 2 || l.Entries[0].TimeMs != 2000 {
		t.Fatalf("entries %+v", l.Entries[0])
	}
	l.Add(e, 70000) // over 60 s after the last update: a new entry
	other := e
	other.Object = "j"
	l.Add(other, 70001)
	if len(l.Entries) != 2 || l.Entries[0].Object != "j" || l.Entries[1].TimeMs != 70000 {
		t.Fatalf("entries %+v %+v", l.Entries[0], l.Entries[1])
	}
}
