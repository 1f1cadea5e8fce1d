package hostcheck

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllows(t *testing.T) {
	for _, c := range []struct {
		name    string
		listen  string
		allowed []string
		yes, no []string
	}{
		{
			name:   "loopback IPv4",
			listen: "127.0.0.1:8090",
			yes: []string{"127.0.0.1:8090", "127.0.0.1", "localhost:8090", "localhost", "LOCALHOST:8090", "localhost.:8090",
				"[::1]:8090", "[::1]", "[0:0:0:0:0:0:0:1]:8090", "[::ffff:127.0.0.1]:8090", "127.0.0.1:08090"},
			no: []string{"evil.example:8090", "evil.example", "127.0.0.1:8091", "localhost:80", "[::1]:9",
				"127.0.0.2:8090", "10.0.0.1:8090", "", ":8090", "localhost:", "localhost:x", "localhost:99999",
				"[::1", "[127.0.0.1]:8090", "[::1]x", "localhost.evil.example", "evil.example.localhost",
				"127.0.0.1.nip.io:8090", "localhost:8090:1"},
		},
		{
			name:   "loopback IPv6",
			listen: "[::1]:8234",
			yes:    []string{"[::1]:8234", "[::1]", "localhost:8234", "127.0.0.1:8234"},
			no:     []string{"[::1]:8235", "evil.example:8234", "[::2]:8234"},
		},
		{
			name:   "one interface",
			listen: "10.1.2.3:8090",
			yes:    []string{"10.1.2.3:8090", "10.1.2.3", "localhost:8090"},
			no:     []string{"127.0.0.1:8090", "[::1]:8090", "10.1.2.4:8090", "10.1.2.3:8091", "rebind.example:8090"},
		},
		{
			name:    "allowed names",
			listen:  "127.0.0.1:8090",
			allowed: []string{"console.example.com", "Tunnel.Example:9000", "[fd00::1]:443", "::2", "192.0.2.7"},
			yes: []string{"console.example.com", "console.example.com:8090", "CONSOLE.example.com.", "tunnel.example:9000",
				"tunnel.example", "[fd00::1]:443", "[fd00::1]", "[::2]:8090", "192.0.2.7:8090"},
			no: []string{"console.example.com:443", "tunnel.example:8090", "tunnel.example:9001", "[fd00::1]:8090",
				"example.com", "evil.console.example.com", "192.0.2.7:1"},
		},
		{
			name:    "a name given to --listen",
			listen:  "steward-box.lan:8090",
			allowed: nil,
			yes:     []string{"steward-box.lan:8090", "STEWARD-BOX.LAN", "localhost:8090"},
			no:      []string{"127.0.0.1:8090", "other.lan:8090", "steward-box.lan:80"},
		},
		{
			name:   "localhost given to --listen",
			listen: "localhost:8090",
			yes:    []string{"localhost:8090", "127.0.0.1:8090", "[::1]:8090"},
			no:     []string{"evil.example:8090"},
		},
		{
			name:   "every interface, IPv4",
			listen: "0.0.0.0:8090",
			yes:    []string{"192.0.2.10:8090", "192.0.2.10", "[2001:db8::10]:8090", "127.0.0.1:8090", "[::1]:8090", "localhost:8090"},
			no:     []string{"192.0.2.11:8090", "192.0.2.10:8091", "0.0.0.0:8090", "rebind.example:8090", "myhost:8090"},
		},
		{
			name:   "every interface, IPv6 and no host",
			listen: "[::]:8090",
			yes:    []string{"192.0.2.10:8090", "[2001:db8::10]:8090", "[fe80::10%25eth0]:8090"},
			no:     []string{"[2001:db8::11]:8090", "[::]:8090", "evil.example:8090"},
		},
		{
			name:   "every interface, empty host",
			listen: ":8090",
			yes:    []string{"192.0.2.10:8090", "localhost:8090"},
			no:     []string{"evil.example:8090"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, err := New(c.listen, c.allowed)
			require.NoError(t, err)
			ch.interfaceAddrs = func() ([]net.Addr, error) {
				return []net.Addr{
					&net.IPNet{IP: net.ParseIP("127.0.0.1"), Mask: net.CIDRMask(8, 32)},
					&net.IPNet{IP: net.ParseIP("192.0.2.10"), Mask: net.CIDRMask(24, 32)},
					&net.IPNet{IP: net.ParseIP("2001:db8::10"), Mask: net.CIDRMask(64, 128)},
					&net.IPAddr{IP: net.ParseIP("fe80::10")},
				}, nil
			}
			for _, h := range c.yes {
				require.True(t, ch.Allows(h), "Host %q should be allowed", h)
			}
			for _, h := range c.no {
				require.False(t, ch.Allows(h), "Host %q should be refused", h)
			}
		})
	}
}

// On all interfaces, the machine's addresses are asked at the request (an
// address that came up after the start counts); if they cannot be listed,
// only the names known at the start are allowed.
func TestAllInterfacesAskedAtTheRequest(t *testing.T) {
	ch, err := New("0.0.0.0:8090", nil)
	require.NoError(t, err)
	var addrs []net.Addr
	ch.interfaceAddrs = func() ([]net.Addr, error) { return addrs, nil }
	require.False(t, ch.Allows("198.51.100.1:8090"))
	addrs = append(addrs, &net.IPNet{IP: net.ParseIP("198.51.100.1"), Mask: net.CIDRMask(24, 32)})
	require.True(t, ch.Allows("198.51.100.1:8090"))
	ch.interfaceAddrs = func() ([]net.Addr, error) { return nil, errors.New("no") }
	require.False(t, ch.Allows("198.51.100.1:8090"))
	require.True(t, ch.Allows("localhost:8090"))

	// The real machine: its loopback address is one of its interfaces'.
	ch, err = New("[::]:8090", nil)
	require.NoError(t, err)
	require.True(t, ch.Allows("127.0.0.1:8090"))
}

func TestBadEntries(t *testing.T) {
	for _, a := range []string{"http://console.example.com", "console.example.com/", "a b", "*.example.com",
		"user@host", "host:port", "host:70000", "[::1", "[::1]:x", ":8090"} {
		_, err := New("127.0.0.1:8090", []string{a})
		require.Error(t, err, a)
		require.ErrorContains(t, err, Flag)
	}
	_, err := New("127.0.0.1", nil)
	require.Error(t, err, "a listen address without a port")
	require.Equal(t, []string{"a.example", "b.example:9000"}, List(" a.example, ,b.example:9000 ,"))
	require.Nil(t, List(""))
}

// The middleware, as a browser would meet it: a page of a rebinding name
// gets 421 with a line naming the flag, and the handler is never called.
func TestHandler(t *testing.T) {
	ch, err := New("127.0.0.1:8090", []string{"console.example.com"})
	require.NoError(t, err)
	called := 0
	h := ch.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called++
		_, _ = io.WriteString(w, "secret")
	}))
	for _, c := range []struct {
		host string
		code int
	}{
		{"127.0.0.1:8090", http.StatusOK},
		{"localhost:8090", http.StatusOK},
		{"[::1]:8090", http.StatusOK},
		{"console.example.com", http.StatusOK},
		{"evil.example:8090", http.StatusMisdirectedRequest},
		{"127.0.0.1:9999", http.StatusMisdirectedRequest},
		{"", http.StatusMisdirectedRequest},
		{strings.Repeat("a", 300) + ".example", http.StatusMisdirectedRequest},
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/logs?path=x", nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		before := called
		h.ServeHTTP(rec, req)
		require.Equal(t, c.code, rec.Code, c.host)
		if c.code == http.StatusOK {
			require.Equal(t, before+1, called)
			require.Equal(t, "secret", rec.Body.String())
			continue
		}
		require.Equal(t, before, called, "a refused request never reaches the handler")
		require.Equal(t, "text/plain; charset=utf-8", rec.Header().Get("Content-Type"))
		require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
		require.Contains(t, rec.Body.String(), "--allowed-hosts")
		require.NotContains(t, rec.Body.String(), "secret")
		require.Less(t, rec.Body.Len(), 300, "a short line")
	}
}
