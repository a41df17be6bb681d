package cluster

import "github.com/redline-dev/redline/server/keyslot"

// NumSlots is the number of hash slots of a Redis Cluster (keys map to them
// through keyslot.Of).
const NumSlots = keyslot.NumSlots
