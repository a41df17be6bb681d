package server

import "strings"

// commandFlags are the flags argv runs with, as Redis's getCommandFlags:
// a subcommand's own, and for EVAL, EVALSHA and FCALL (and their _RO
// forms) the ones the script declares (a shebang's flags, a function's
// registered flags) in place of the command's write, denyoom and stale:
// a script that declared its flags without allow-oom is refused under
// OOM before it runs, one without no-writes is a write, one with
// allow-stale runs on a stale replica.
func (s *Server) commandFlags(cmd *Command, argv [][]byte) Flag {
	f := cmd.effectiveFlags(argv)
	if s.scripts == nil || len(argv) < 2 {
		return f
	}
	switch cmd.Name {
	case "eval", "eval_ro":
		sha := sha1hex(string(argv[1]))
		flags, declared := s.scripts.shebangs[sha]
		if _, cached := s.scripts.funcs[sha]; !cached {
			var err error
			if _, flags, declared, err = scriptShebang(string(argv[1])); err != nil {
				return f
			}
		}
		if declared {
			return scriptCommandFlags(f, flags)
		}
	case "evalsha", "evalsha_ro":
		if flags, declared := s.scripts.shebangs[strings.ToLower(string(argv[1]))]; declared {
			return scriptCommandFlags(f, flags)
		}
	case "fcall", "fcall_ro":
		if fl := s.scripts.fns; fl != nil {
			if fn := fl.funcs[strings.ToLower(string(argv[1]))]; fn != nil {
				return scriptCommandFlags(f, fn.flags)
			}
		}
	}
	return f
}

// scriptCommandFlags is scriptFlagsToCmdFlags: a script's declared flags
// replace the command's write, denyoom and stale (no-writes implies
// allow-oom).
func scriptCommandFlags(f Flag, script uint8) Flag {
	f &^= FlagStale | FlagDenyOOM | FlagWrite | FlagMayReplicate
	if script&(fnAllowOOM|fnNoWrites) == 0 {
		f |= FlagDenyOOM
	}
	if script&fnNoWrites == 0 {
		f |= FlagWrite
	}
	if script&fnAllowStale != 0 {
		f |= FlagStale
	}
	return f
}
