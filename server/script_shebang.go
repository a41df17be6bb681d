package server

import (
	"errors"
	"strings"
)

// Redis 7 scripts may start with a shebang, "#!lua flags=no-writes,...",
// that gives EVAL scripts the flags functions get from
// redis.register_function. A script with a shebang and without no-writes
// cannot run with EVAL_RO; one without a shebang keeps Redis 6's rules.

// scriptShebang reads body's shebang: has tells whether there is one, code
// is the body with the shebang line blanked (line numbers stay), flags the
// fn* flags it names.
func scriptShebang(body string) (code string, flags uint8, has bool, err error) {
	if !strings.HasPrefix(body, "#!") {
		return body, 0, false, nil
	}
	line, rest := body[2:], ""
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line, rest = line[:i], line[i:]
	}
	parts := strings.Fields(line)
	if len(parts) == 0 || parts[0] != "lua" {
		return "", 0, true, errors.New("ERR Unexpected engine in script shebang: " + line)
	}
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "flags=") {
			return "", 0, true, errors.New("ERR Unknown lua shebang option: " + p)
		}
		for _, f := range strings.Split(p[len("flags="):], ",") {
			if f == "" {
				continue
			}
			found := false
			for i, n := range fnFlagNames {
				if n == f {
					flags |= 1 << i
					found = true
				}
			}
			if !found {
				return "", 0, true, errors.New("ERR Unexpected flag in script shebang: " + f)
			}
		}
	}
	return rest, flags, true, nil
}

// scriptFlagsError is the error a script with these flags gets before it
// runs, or "": no-cluster in cluster mode, a script that may write called
// with a read-only command (roCmd) when it declared its flags.
func scriptFlagsError(c *Client, flags uint8, declared, roCmd bool) string {
	if flags&fnNoCluster != 0 && c.s.cfg.ClusterEnabled {
		return "ERR Can not run script on cluster, 'no-cluster' flag is set."
	}
	if roCmd && declared && flags&fnNoWrites == 0 {
		return "ERR Can not execute a script with write flag using *_ro command."
	}
	return ""
}
