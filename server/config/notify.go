package config

import "strings"

// Keyspace event classes of notify-keyspace-events, Redis 7.0's NOTIFY_*
// bits (server.h): the server tests a command's class against them.
const (
	NotifyKeyspace = 1 << 0  // K
	NotifyKeyevent = 1 << 1  // E
	NotifyGeneric  = 1 << 2  // g
	NotifyString   = 1 << 3  // $
	NotifyList     = 1 << 4  // l
	NotifySet      = 1 << 5  // s
	NotifyHash     = 1 << 6  // h
	NotifyZSet     = 1 << 7  // z
	NotifyExpired  = 1 << 8  // x
	NotifyEvicted  = 1 << 9  // e
	NotifyStream   = 1 << 10 // t
	NotifyKeyMiss  = 1 << 11 // m, left out of A on purpose (as Redis)
	NotifyModule   = 1 << 13 // d
	NotifyNew      = 1 << 14 // n
	NotifyAll      = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash | NotifyZSet |
		NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

// KeyspaceEventsFlags parses a class string (keyspaceEventsStringToFlags);
// ok is false for a character that names no class.
func KeyspaceEventsFlags(classes string) (flags int, ok bool) {
	for _, ch := range classes {
		switch ch {
		case 'A':
			flags |= NotifyAll
		case 'g':
			flags |= NotifyGeneric
		case '$':
			flags |= NotifyString
		case 'l':
			flags |= NotifyList
		case 's':
			flags |= NotifySet
		case 'h':
			flags |= NotifyHash
		case 'z':
			flags |= NotifyZSet
		case 'x':
			flags |= NotifyExpired
		case 'e':
			flags |= NotifyEvicted
		case 'K':
			flags |= NotifyKeyspace
		case 'E':
			flags |= NotifyKeyevent
		case 't':
			flags |= NotifyStream
		case 'm':
			flags |= NotifyKeyMiss
		case 'd':
			flags |= NotifyModule
		case 'n':
			flags |= NotifyNew
		default:
			return 0, false
		}
	}
	return flags, true
}

// KeyspaceEventsString is the canonical spelling CONFIG GET returns
// (keyspaceEventsFlagsToString): "A" for all of A's classes, then K, E, m.
func KeyspaceEventsString(flags int) string {
	var b strings.Builder
	if flags&NotifyAll == NotifyAll {
		b.WriteByte('A')
	} else {
		for _, c := range []struct {
			bit int
			ch  byte
		}{{NotifyGeneric, 'g'}, {NotifyString, '$'}, {NotifyList, 'l'}, {NotifySet, 's'}, {NotifyHash, 'h'},
			{NotifyZSet, 'z'}, {NotifyExpired, 'x'}, {NotifyEvicted, 'e'}, {NotifyStream, 't'}, {NotifyModule, 'd'},
			{NotifyNew, 'n'}} {
			if flags&c.bit != 0 {
				b.WriteByte(c.ch)
			}
		}
	}
	if flags&NotifyKeyspace != 0 {
		b.WriteByte('K')
	}
	if flags&NotifyKeyevent != 0 {
		b.WriteByte('E')
	}
	if flags&NotifyKeyMiss != 0 {
		b.WriteByte('m')
	}
	return b.String()
}

func keyspaceEventsField(p *int) field {
	return field{
		set: func(a []string) error {
			v, err := one(a)
			if err != nil {
				return err
			}
			flags, ok := KeyspaceEventsFlags(v)
			if !ok {
				return errArg("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
			}
			*p = flags
			return nil
		},
		get: func() string { return KeyspaceEventsString(*p) },
	}
}
