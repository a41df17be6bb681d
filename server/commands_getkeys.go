package server

import (
	"strconv"
	"strings"
)

// Redis 7.0's key specifications (commands_keyspecs_gen.go): where a command's keys
// are and what it does to each (RW/RO/OW/RM, access/update/insert/delete).
// COMMAND GETKEYSANDFLAGS reports them per key.

type keySpec struct {
	flags []string
	begin ksBegin
	find  ksFind
}

type ksBegin struct {
	index     int
	keyword   string
	startFrom int
	unknown   bool
}

type ksFind struct {
	lastKey, step, limit int
	keynum               bool
	keynumIdx, firstKey  int
	unknown              bool
}

// positions evaluates a spec on argv (argv[0] the command) as Redis's
// getKeysUsingKeySpecs does; ok is false for arguments the spec cannot
// make sense of.
func (ks keySpec) positions(argv [][]byte) (pos []int, ok bool) {
	argc := len(argv)
	first := 0
	switch {
	case ks.begin.unknown:
		return nil, true
	case ks.begin.keyword != "":
		start, end, dir := ks.begin.startFrom, argc-1, 1
		if start < 0 {
			start, end, dir = argc+start, 0, -1
		}
		for i := start; i != end+dir; i += dir {
			if i >= argc || i < 1 {
				break
			}
			if strings.EqualFold(string(argv[i]), ks.begin.keyword) {
				first = i + 1
				break
			}
		}
		if first == 0 {
			return nil, true
		}
	default:
		first = ks.begin.index
	}
	last, step := 0, 1
	switch {
	case ks.find.unknown:
		return nil, true
	case ks.find.keynum:
		i := first + ks.find.keynumIdx
		if i >= argc {
			return nil, false
		}
		n, err := strconv.Atoi(string(argv[i]))
		if err != nil || n < 0 {
			return nil, false
		}
		first += ks.find.firstKey
		step = ks.find.step
		last = first + (n-1)*step
	default:
		step = ks.find.step
		switch {
		case ks.find.lastKey >= 0:
			last = first + ks.find.lastKey
		case ks.find.limit == 0:
			last = argc + ks.find.lastKey
		default:
			last = first + ((argc-first)/ks.find.limit + ks.find.lastKey)
		}
	}
	for i := first; i <= last; i += step {
		if i >= argc || i < first {
			return pos, false
		}
		pos = append(pos, i)
	}
	return pos, true
}

// keyFlags returns the key-spec flags of each key position of argv.
func keyFlags(cmd *Command, argv [][]byte, idx []int) [][]string {
	name := cmd.Name
	if sub := cmd.subcommand(argv); sub != nil {
		name += "|" + sub.Name
	} else if len(argv) > 1 {
		if _, ok := keySpecTable[name+"|"+strings.ToLower(string(argv[1]))]; ok {
			name += "|" + strings.ToLower(string(argv[1]))
		}
	}
	specs := keySpecTable[name]
	out := make([][]string, len(idx))
	for k, i := range idx {
		for _, ks := range specs {
			ps, _ := ks.positions(argv)
			for _, p := range ps {
				if p == i {
					out[k] = specFlags(name, ks.flags, argv)
					break
				}
			}
			if out[k] != nil {
				break
			}
		}
		if out[k] == nil {
			if cmd.Flags&FlagWrite != 0 {
				out[k] = []string{"RW", "update"}
			} else {
				out[k] = []string{"RO", "access"}
			}
		}
	}
	return out
}

// specFlags resolves variable_flags as Redis's getkeys procs do.
func specFlags(name string, flags []string, argv [][]byte) []string {
	var out []string
	variable := false
	for _, f := range flags {
		if f == "variable_flags" {
			variable = true
			continue
		}
		out = append(out, f)
	}
	if variable && name == "set" {
		for _, a := range argv[3:] {
			if strings.EqualFold(string(a), "get") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	}
	return out
}
