// Package hostcheck keeps steward's local HTTP servers (`starter console`,
// `starter codec-server`) to their own names: a request whose Host header
// is not one the server answers to gets 421 Misdirected Request.
//
// It is the defence against DNS rebinding: a web page the operator visits
// at http://evil.example:8090/ can have evil.example resolve to 127.0.0.1,
// and the browser then lets that page read what the loopback server
// answers, since to the browser it is the page's own origin. The browser
// still sends `Host: evil.example:8090`, which no server of steward's
// answers to.
//
// A server answers to:
//   - the host of the address it listens on (the IP, or the name given
//     to --listen);
//   - localhost;
//   - 127.0.0.1 and ::1 when it listens on loopback;
//   - every address of the machine's interfaces (asked when a request
//     names one it does not know yet, so an address that came up later
//     counts) when it listens on all of them (0.0.0.0, ::, or no host);
//   - the names given to --allowed-hosts (NAME or NAME:PORT).
//
// A port in the Host header must be the port the server listens on, or
// the one an --allowed-hosts entry names (NAME:PORT). A Host without a
// port is compared by its name alone. Names are compared without case and
// without a trailing dot; IP addresses in their canonical form (an
// IPv4-mapped IPv6 address as IPv4, no zone).
package hostcheck

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// Flag is the flag that adds names, named in the 421 answer.
const Flag = "--allowed-hosts"

// Checker is the list of names a server answers to.
type Checker struct {
	// names maps a canonical host to the ports it is allowed with; ""
	// stands for the port the server listens on.
	names map[string][]string
	port  string // the port the server listens on
	// all: the server listens on every interface; an IP literal that is
	// one of the machine's addresses is allowed too.
	all bool
	// interfaceAddrs lists the machine's addresses (net.InterfaceAddrs;
	// a test replaces it).
	interfaceAddrs func() ([]net.Addr, error)
}

// New is the checker of a server listening on listen (host:port, as the
// listener's Addr().String() gives it, or as --listen was given: a host
// that is a name is allowed as given), answering also to allowed
// (--allowed-hosts entries: NAME, NAME:PORT, an IP, [IPv6]:PORT).
func New(listen string, allowed []string) (*Checker, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %v", listen, err)
	}
	if port, err = canonicalPort(port); err != nil {
		return nil, fmt.Errorf("listen address %q: %v", listen, err)
	}
	c := &Checker{names: map[string][]string{}, port: port, interfaceAddrs: net.InterfaceAddrs}
	c.add("localhost", "")
	ip, isIP := parseIP(host)
	switch {
	case host == "" || isIP && ip.IsUnspecified():
		c.all = true
		c.add("127.0.0.1", "")
		c.add("::1", "")
	case isIP:
		c.add(ip.String(), "")
		if ip.IsLoopback() {
			c.add("127.0.0.1", "")
			c.add("::1", "")
		}
	default:
		c.add(canonicalName(host), "")
		if strings.EqualFold(canonicalName(host), "localhost") {
			c.add("127.0.0.1", "")
			c.add("::1", "")
		}
	}
	for _, a := range allowed {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		h, p, ok := split(a)
		if !ok || strings.ContainsAny(a, "/@?#* ") {
			return nil, fmt.Errorf("%s: %q is not a host name, an IP or HOST:PORT", Flag, a)
		}
		c.add(canonical(h), p)
	}
	return c, nil
}

// List splits a --allowed-hosts value (comma-separated, spaces ignored).
func List(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func (c *Checker) add(host, port string) {
	for _, p := range c.names[host] {
		if p == port {
			return
		}
	}
	c.names[host] = append(c.names[host], port)
}

// Allows tells whether a request with this Host header is for this server.
func (c *Checker) Allows(hostHeader string) bool {
	h, p, ok := split(hostHeader)
	if !ok {
		return false
	}
	h = canonical(h)
	ports, found := c.names[h]
	if !found && c.all {
		if ip, isIP := parseIP(h); isIP && c.isInterfaceAddr(ip) {
			ports, found = []string{""}, true
		}
	}
	if !found {
		return false
	}
	if p == "" {
		return true // no port: the name decides (a browser's default port)
	}
	for _, allowed := range ports {
		if allowed == p || allowed == "" && p == c.port {
			return true
		}
	}
	return false
}

func (c *Checker) isInterfaceAddr(ip netip.Addr) bool {
	addrs, err := c.interfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		var s string
		switch v := a.(type) {
		case *net.IPNet:
			s = v.IP.String()
		case *net.IPAddr:
			s = v.IP.String()
		default:
			s = a.String()
			if i := strings.IndexByte(s, '/'); i >= 0 {
				s = s[:i]
			}
		}
		if other, ok := parseIP(s); ok && other == ip {
			return true
		}
	}
	return false
}

// Handler serves next the requests whose Host is allowed, and answers the
// others 421 Misdirected Request with a line of plain text.
func (c *Checker) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.Allows(r.Host) {
			h := w.Header()
			h.Set("Content-Type", "text/plain; charset=utf-8")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusMisdirectedRequest)
			host := r.Host
			if len(host) > 100 {
				host = host[:100] + "..."
			}
			fmt.Fprintf(w, "misdirected request: this server does not answer to Host %q; if that is its name, start it with %s NAME[:PORT]\n", host, Flag)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// split parses a Host header (or an --allowed-hosts entry): NAME, NAME:PORT,
// IPv4, IPv4:PORT, [IPv6], [IPv6]:PORT, or a bare IPv6 address. The port
// comes back canonical ("" when none).
func split(s string) (host, port string, ok bool) {
	if s == "" {
		return "", "", false
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false
		}
		host, rest := s[1:end], s[end+1:]
		if _, isIP := parseIP(host); !isIP || strings.Contains(host, ".") && !strings.Contains(host, ":") {
			return "", "", false
		}
		if rest == "" {
			return host, "", true
		}
		p, found := strings.CutPrefix(rest, ":")
		if !found {
			return "", "", false
		}
		p, err := canonicalPort(p)
		return host, p, err == nil
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, "", true
	case 1:
		i := strings.IndexByte(s, ':')
		p, err := canonicalPort(s[i+1:])
		return s[:i], p, err == nil && i > 0
	default:
		// A bare IPv6 address (not valid in a Host header, but named in
		// --allowed-hosts as ::1).
		_, isIP := parseIP(s)
		return s, "", isIP
	}
}

func canonicalPort(p string) (string, error) {
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", fmt.Errorf("port %q is not a number from 0 to 65535", p)
	}
	return strconv.FormatUint(n, 10), nil
}

// parseIP reads an IP address (a zone, as in fe80::1%eth0 or its
// URL-escaped %25eth0, is dropped; an IPv4-mapped IPv6 address is IPv4).
func parseIP(s string) (netip.Addr, bool) {
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

func canonicalName(s string) string {
	return strings.TrimSuffix(strings.ToLower(s), ".")
}

// canonical is the form a host is compared in.
func canonical(h string) string {
	if ip, ok := parseIP(h); ok {
		return ip.String()
	}
	return canonicalName(h)
}
