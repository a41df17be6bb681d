package rdb

// CRC-64/Jones as Redis computes it: reflected polynomial
// 0xad93d23594c935a9, initial value 0, no final xor.
var crcTable = func() (t [256]uint64) {
	const poly = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 bit-reversed
	for i := range t {
		c := uint64(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return
}()

// CRC64 continues crc over p.
func CRC64(crc uint64, p []byte) uint64 {
	for _, b := range p {
		crc = crcTable[byte(crc)^b] ^ crc>>8
	}
	return crc
}
