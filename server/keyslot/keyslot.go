// Package keyslot is the one home of the Redis Cluster key-to-slot function
// in the reference server: CRC16-XMODEM of the key, or of its hash tag,
// modulo 16384. The keyspace's slot index (server/store), routing and
// CLUSTER KEYSLOT (server/cluster) all use it.
package keyslot

// NumSlots is the number of hash slots of a Redis Cluster.
const NumSlots = 16384

var crc16tab = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// CRC16 is CRC16-XMODEM (polynomial 0x1021, initial value 0, no reflection),
// the checksum Redis Cluster uses for key slots.
func CRC16[K ~string | ~[]byte](b K) uint16 {
	var crc uint16
	for i := 0; i < len(b); i++ {
		crc = crc<<8 ^ crc16tab[byte(crc>>8)^b[i]]
	}
	return crc
}

// HashTag returns the part of key that is hashed: the bytes between the first
// '{' and the next '}' when there is at least one byte between them, else the
// whole key.
func HashTag[K ~string | ~[]byte](key K) K {
	for s := 0; s < len(key); s++ {
		if key[s] != '{' {
			continue
		}
		for e := s + 1; e < len(key); e++ {
			if key[e] == '}' {
				if e == s+1 {
					return key
				}
				return key[s+1 : e]
			}
		}
		return key
	}
	return key
}

// Of returns the hash slot of key (a string or a byte slice: no conversion,
// no allocation).
func Of[K ~string | ~[]byte](key K) int {
	return int(CRC16(HashTag(key)) & (NumSlots - 1))
}
