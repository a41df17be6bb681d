package checker

import (
	"strings"
	"testing"
)

// topo is a CLUSTER NODES text of two shards: a (slots 0-8191) and b
// (8192-16383), each line "id addr role master epoch slots".
func topo(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		f := strings.Fields(l)
		slots := ""
		if len(f) > 5 {
			slots = " " + strings.Join(f[5:], " ")
		}
		b.WriteString(f[0] + " " + f[1] + "@16379 " + f[2] + " " + f[3] + " 0 1796473051000 " + f[4] + " connected" + slots + "\n")
	}
	return b.String()
}

// promotion: p1 (epoch 1) serves 0-8191 with replica r1, p2 (epoch 2)
// serves the rest; at 2 s r1 is a primary with epoch promoted, p1 its
// replica.
func promotion(promoted string) []TopologySample {
	return []TopologySample{
		{Time: 1e9, ClusterNodes: topo("p1 10.0.0.1:6379 myself,master - 1 0-8191", "p2 10.0.0.2:6379 master - 2 8192-16383", "r1 10.0.0.3:6379 slave p1 1")},
		{Time: 2e9, ClusterNodes: topo("p1 10.0.0.1:6379 slave r1 "+promoted, "p2 10.0.0.2:6379 master - 2 8192-16383", "r1 10.0.0.3:6379 master - "+promoted+" 0-8191")},
	}
}

// Gap promote-no-epoch (docs/planted-bugs.md): a replica that wins an
// election and takes its primary's slots without a configEpoch above its
// primary's breaks the protocol, visible in the sampled CLUSTER NODES.
func TestConfigEpochOfAPromotion(t *testing.T) {
	r := check(t, ConfigEpochs(ConfigEpochOptions{Samples: promotion("3")}), nil)
	wantValid(t, r, Valid)
	if typed[*EpochFigures](t, r).OwnerChanges != 8192 {
		t.Fatalf("figures %v", r.Figures)
	}
	for _, e := range []string{"1", "0"} {
		r = check(t, ConfigEpochs(ConfigEpochOptions{Samples: promotion(e)}), nil)
		wantValid(t, r, Invalid)
		if !strings.Contains(r.Why(), "configEpoch "+e+", not above the configEpoch 1") || !strings.Contains(r.Why(), "a replica (a promotion)") || !strings.Contains(r.Why(), "0-8191") {
			t.Fatalf("epoch %s: why %q", e, r.Why())
		}
	}
}

// A restarted primary claims its old slots with its old epoch until it
// learns of its successor: no violation; nor is a node that was failed.
func TestConfigEpochStaleClaimIsNoViolation(t *testing.T) {
	s := promotion("3")
	s = append(s,
		TopologySample{Time: 3e9, ClusterNodes: topo("p1 10.0.0.1:6379 master,fail - 1", "p2 10.0.0.2:6379 master - 2 8192-16383", "r1 10.0.0.3:6379 master - 3 0-8191")},
		TopologySample{Time: 4e9, ClusterNodes: topo("p1 10.0.0.1:6379 myself,master - 1 0-8191", "p2 10.0.0.2:6379 master - 2 8192-16383", "r1 10.0.0.3:6379 master - 3 0-8191")},
		TopologySample{Time: 5e9, ClusterNodes: topo("p1 10.0.0.1:6379 slave r1 3", "p2 10.0.0.2:6379 master - 2 8192-16383", "r1 10.0.0.3:6379 master - 3 0-8191")},
	)
	wantValid(t, check(t, ConfigEpochs(ConfigEpochOptions{Samples: s}), nil), Valid)
}

// The samples can lie: garbage, a torn line, two differing samples of one
// instant, samples out of order. Each makes an honest run unknown (never
// valid), and none hides a violation.
func TestConfigEpochLiesAreNeverValid(t *testing.T) {
	lies := map[string]func([]TopologySample) []TopologySample{
		"garbage epoch": func(s []TopologySample) []TopologySample {
			s[0].ClusterNodes = strings.Replace(s[0].ClusterNodes, " 2 connected", " two connected", 1)
			return s
		},
		"garbage slots": func(s []TopologySample) []TopologySample {
			s[0].ClusterNodes = strings.Replace(s[0].ClusterNodes, "8192-16383", "8192-99999", 1)
			return s
		},
		"torn line": func(s []TopologySample) []TopologySample {
			s[0].ClusterNodes = s[0].ClusterNodes[:len(s[0].ClusterNodes)-30]
			return s
		},
		"contradiction": func(s []TopologySample) []TopologySample {
			return append(s, TopologySample{Time: s[0].Time, ClusterNodes: topo("p1 10.0.0.1:6379 master - 1 0-100")})
		},
		"out of order": func(s []TopologySample) []TopologySample {
			return append(s, TopologySample{Time: 1, ClusterNodes: s[0].ClusterNodes})
		},
	}
	for name, lie := range lies {
		r := check(t, ConfigEpochs(ConfigEpochOptions{Samples: lie(promotion("3"))}), nil)
		if r.Valid == Valid || r.NotApplicable != "" {
			t.Errorf("%s on an honest run: %v %q %v", name, r.Valid, r.NotApplicable, r.Figures)
		}
		if name == "contradiction" || name == "garbage epoch" || name == "garbage slots" || name == "torn line" {
			continue // the first sample is not believed: no baseline for the promotion
		}
		r = check(t, ConfigEpochs(ConfigEpochOptions{Samples: lie(promotion("1"))}), nil)
		wantValid(t, r, Invalid)
	}
	// Missing: none at all, where the runner samples every run.
	wantValid(t, check(t, ConfigEpochs(ConfigEpochOptions{Expected: "recorded by the runner"}), nil), Unknown)
	if r := check(t, ConfigEpochs(ConfigEpochOptions{}), nil); r.NotApplicable == "" {
		t.Fatalf("no samples, none expected: %v", r.Valid)
	}
}
