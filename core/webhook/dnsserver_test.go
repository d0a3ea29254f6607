package webhook

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// startDNS serves the A and AAAA records in zone (name → addresses) over UDP
// on 127.0.0.1 and returns a resolver that asks only it. Names not in zone
// are NXDOMAIN. It is the smallest DNS server the Go resolver accepts, so
// the Client's real lookup path runs in tests.
func startDNS(t *testing.T, zone map[string][]string) *net.Resolver {
	t.Helper()
	records := map[string][]netip.Addr{}
	for name, addrs := range zone {
		for _, a := range addrs {
			records[strings.ToLower(name)] = append(records[strings.ToLower(name)], netip.MustParseAddr(a))
		}
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening for DNS: %v", err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return // closed by cleanup
			}
			if resp := answerDNS(buf[:n], records); resp != nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	server := pc.LocalAddr().String()
	return &net.Resolver{
		PreferGo: true, // the cgo resolver would ignore Dial
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", server)
		},
	}
}

// answerDNS builds the response to one query, or nil for garbage.
func answerDNS(q []byte, records map[string][]netip.Addr) []byte {
	const headerLen = 12
	if len(q) < headerLen || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	// Question: labels, then QTYPE and QCLASS.
	var labels []string
	i := headerLen
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i : i+2])
	question := q[headerLen : i+4]
	name := strings.ToLower(strings.Join(labels, "."))

	addrs, known := records[name]
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case qtype == 1 && a.Is4():
			answers = append(answers, a.AsSlice())
		case qtype == 28 && a.Is6():
			answers = append(answers, a.AsSlice())
		}
	}

	resp := make([]byte, headerLen, 512)
	copy(resp[0:2], q[0:2])                           // ID
	flags := uint16(0x8000 | 0x0400 | 0x0080)         // QR, AA, RA
	flags |= binary.BigEndian.Uint16(q[2:4]) & 0x0100 // RD as asked
	if !known {
		flags |= 3 // NXDOMAIN
	}
	binary.BigEndian.PutUint16(resp[2:4], flags)
	binary.BigEndian.PutUint16(resp[4:6], 1)
	binary.BigEndian.PutUint16(resp[6:8], uint16(len(answers)))
	resp = append(resp, question...)
	for _, rdata := range answers {
		resp = append(resp, 0xc0, headerLen) // name: pointer to the question
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, 1)  // class IN
		resp = binary.BigEndian.AppendUint32(resp, 60) // TTL
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp
}

func TestStartDNS(t *testing.T) {
	t.Parallel()
	r := startDNS(t, map[string][]string{"both.test": {"192.0.2.1", "2001:db8::1"}})
	got, err := r.LookupNetIP(context.Background(), "ip", "both.test")
	if err != nil || len(got) != 2 {
		t.Fatalf("LookupNetIP(both.test) = %v, %v; want two addresses", got, err)
	}
	_, err = r.LookupNetIP(context.Background(), "ip", "missing.test")
	if dnsErr, ok := errors.AsType[*net.DNSError](err); !ok || !dnsErr.IsNotFound {
		t.Fatalf("LookupNetIP(missing.test) error = %v, want not found", err)
	}
}
