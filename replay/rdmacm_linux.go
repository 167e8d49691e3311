//go:build rdmacm && linux && cgo

package replay

/*
#cgo LDFLAGS: -lrdmacm -libverbs
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

// rp_side is what one step of a replay side reports back to Go.
struct rp_side {
	int err;              // errno of the failed call, 0 when done
	char where[64];       // the call that failed
	int event;            // the rdma_cm event that ended the step
	int status;           // that event's status
	int pd_len;           // param.conn.private_data_len
	unsigned char pd[256];
	char device[64];
	int iwarp;
	char local[80], peer[80];
};

static void rp_fail(struct rp_side *s, const char *where, int err) {
	s->err = err ? err : EIO;
	snprintf(s->where, sizeof s->where, "%s", where);
}

static void rp_addr(char *dst, size_t n, struct sockaddr *sa) {
	char host[64] = "";
	unsigned port = 0;
	dst[0] = 0;
	if (!sa) return;
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		port = ntohs(in->sin_port);
		snprintf(dst, n, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		port = ntohs(in6->sin6_port);
		snprintf(dst, n, "[%s]:%u", host, port);
	}
}

static void rp_describe(struct rp_side *s, struct rdma_cm_id *id) {
	if (id->verbs) {
		snprintf(s->device, sizeof s->device, "%s", ibv_get_device_name(id->verbs->device));
		s->iwarp = id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	}
	rp_addr(s->local, sizeof s->local, rdma_get_local_addr(id));
	rp_addr(s->peer, sizeof s->peer, rdma_get_peer_addr(id));
}

// rp_wait waits up to ms for the next event on ch. It returns 0 with *ev
// set, or an errno (ETIMEDOUT).
static int rp_wait(struct rdma_event_channel *ch, int ms, struct rdma_cm_event **ev) {
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int n = poll(&p, 1, ms);
	if (n == 0) return ETIMEDOUT;
	if (n < 0) return errno;
	if (rdma_get_cm_event(ch, ev)) return errno;
	return 0;
}

static void rp_keep_pd(struct rp_side *s, struct rdma_cm_event *ev) {
	s->event = ev->event;
	s->status = ev->status;
	s->pd_len = ev->param.conn.private_data_len;
	if (ev->param.conn.private_data && s->pd_len > 0)
		memcpy(s->pd, ev->param.conn.private_data, s->pd_len);
	else
		s->pd_len = 0;
}

static int rp_sockaddr(const char *host, int port, struct sockaddr_storage *ss) {
	struct addrinfo hints, *res;
	char service[16];
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof service, "%d", port);
	int rc = getaddrinfo(host && host[0] ? host : NULL, service, &hints, &res);
	if (rc) return EINVAL;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static int rp_make_qp(struct rdma_cm_id *id) {
	struct ibv_qp_init_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	return rdma_create_qp(id, NULL, &attr) ? errno : 0;
}

static void rp_conn_param(struct rdma_conn_param *cp, const void *pd, int len) {
	memset(cp, 0, sizeof *cp);
	cp->private_data = len ? pd : NULL;
	cp->private_data_len = len;
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

static void rp_teardown(struct rdma_cm_id *id) {
	if (!id) return;
	if (id->qp) rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

// rp_disconnected waits for RDMA_CM_EVENT_DISCONNECTED on ch.
static int rp_disconnected(struct rdma_event_channel *ch, int ms, struct rp_side *s) {
	struct rdma_cm_event *ev;
	for (;;) {
		int rc = rp_wait(ch, ms, &ev);
		if (rc) { rp_fail(s, "waiting for DISCONNECTED", rc); return rc; }
		int e = ev->event;
		rdma_ack_cm_event(ev);
		if (e == RDMA_CM_EVENT_DISCONNECTED) return 0;
		if (e == RDMA_CM_EVENT_TIMEWAIT_EXIT) continue;
		rp_fail(s, rdma_event_str(e), EPROTO);
		return EPROTO;
	}
}

// rp_dial is the whole client side: resolve, connect with pd, report the
// peer's private data, post one Send of msg (send_len octets) when given,
// hold, disconnect.
static void rp_dial(const char *src, const char *dst, int port, const void *pd, int len,
		int ms, int hold_ms, void *msg, int send_len, struct rp_side *s, struct rp_side *done) {
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_id *id = NULL;
	struct ibv_mr *mr = NULL;
	struct rdma_cm_event *ev;
	struct sockaddr_storage sa, da;
	struct rdma_conn_param cp;
	int rc;

	memset(s, 0, sizeof *s);
	memset(done, 0, sizeof *done);
	if ((rc = rp_sockaddr(dst, port, &da))) { rp_fail(s, "server address", rc); return; }
	if (src && src[0] && (rc = rp_sockaddr(src, 0, &sa))) { rp_fail(s, "source address", rc); return; }
	if (!(ch = rdma_create_event_channel())) { rp_fail(s, "rdma_create_event_channel", errno); return; }
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) { rp_fail(s, "rdma_create_id", errno); goto out; }
	if (rdma_resolve_addr(id, src && src[0] ? (struct sockaddr *)&sa : NULL, (struct sockaddr *)&da, ms)) {
		rp_fail(s, "rdma_resolve_addr", errno); goto out;
	}
	if ((rc = rp_wait(ch, ms + 1000, &ev))) { rp_fail(s, "waiting for ADDR_RESOLVED", rc); goto out; }
	if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
		rp_fail(s, rdma_event_str(ev->event), ev->status < 0 ? -ev->status : EHOSTUNREACH);
		rdma_ack_cm_event(ev); goto out;
	}
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, ms)) { rp_fail(s, "rdma_resolve_route", errno); goto out; }
	if ((rc = rp_wait(ch, ms + 1000, &ev))) { rp_fail(s, "waiting for ROUTE_RESOLVED", rc); goto out; }
	if (ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		rp_fail(s, rdma_event_str(ev->event), ev->status < 0 ? -ev->status : EHOSTUNREACH);
		rdma_ack_cm_event(ev); goto out;
	}
	rdma_ack_cm_event(ev);
	if ((rc = rp_make_qp(id))) { rp_fail(s, "rdma_create_qp", rc); goto out; }
	rp_conn_param(&cp, pd, len);
	if (rdma_connect(id, &cp)) { rp_fail(s, "rdma_connect", errno); goto out; }
	if ((rc = rp_wait(ch, ms, &ev))) { rp_fail(s, "waiting for ESTABLISHED or REJECTED", rc); goto out; }
	rp_keep_pd(s, ev);
	rp_describe(s, id);
	rdma_ack_cm_event(ev);
	if (s->event == RDMA_CM_EVENT_REJECTED) goto out;
	if (s->event != RDMA_CM_EVENT_ESTABLISHED) {
		rp_fail(s, rdma_event_str(s->event), s->status < 0 ? -s->status : ECONNREFUSED);
		goto out;
	}
	if (msg && send_len > 0) {
		// The server posts no receive buffer: its QP answers RNR NAK, and
		// ours retries (rnr_retry_count 7: without end) until the
		// disconnect flushes the Send.
		if (!(mr = rdma_reg_msgs(id, msg, send_len))) { rp_fail(done, "rdma_reg_msgs", errno); goto out; }
		if (rdma_post_send(id, NULL, msg, send_len, mr, 0)) { rp_fail(done, "rdma_post_send", errno); goto out; }
	}
	if (hold_ms > 0) poll(NULL, 0, hold_ms);
	if (rdma_disconnect(id)) { rp_fail(done, "rdma_disconnect", errno); goto out; }
	rp_disconnected(ch, ms, done);
out:
	// The MR goes after the QP (which may still hold the Send) and
	// before the id (whose device holds the protection domain).
	if (id && id->qp) rdma_destroy_qp(id);
	if (mr) rdma_dereg_mr(mr);
	rp_teardown(id);
	if (ch) rdma_destroy_event_channel(ch);
}

struct rp_listener {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

static void rp_listen(const char *addr, int port, struct rp_listener *l, struct rp_side *s) {
	struct sockaddr_storage sa;
	int rc;
	memset(s, 0, sizeof *s);
	memset(l, 0, sizeof *l);
	if ((rc = rp_sockaddr(addr, port, &sa))) { rp_fail(s, "listen address", rc); return; }
	if (!(l->ch = rdma_create_event_channel())) { rp_fail(s, "rdma_create_event_channel", errno); return; }
	if (rdma_create_id(l->ch, &l->id, NULL, RDMA_PS_TCP)) { rp_fail(s, "rdma_create_id", errno); return; }
	if (rdma_bind_addr(l->id, (struct sockaddr *)&sa)) { rp_fail(s, "rdma_bind_addr", errno); return; }
	if (rdma_listen(l->id, 4)) { rp_fail(s, "rdma_listen", errno); return; }
	rp_describe(s, l->id);
}

static void rp_close(struct rp_listener *l) {
	if (l->id) rdma_destroy_id(l->id);
	if (l->ch) rdma_destroy_event_channel(l->ch);
	memset(l, 0, sizeof *l);
}

// rp_accept_one takes the next connection request on l: reports its
// private data, accepts (or rejects) it with pd and waits for the client's
// disconnect.
static void rp_accept_one(struct rp_listener *l, const void *pd, int len, int reject, int ms,
		struct rp_side *s, struct rp_side *done) {
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct rdma_conn_param cp;
	int rc;

	memset(s, 0, sizeof *s);
	memset(done, 0, sizeof *done);
	if ((rc = rp_wait(l->ch, ms, &ev))) { rp_fail(s, "waiting for CONNECT_REQUEST", rc); return; }
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		rp_fail(s, rdma_event_str(ev->event), EPROTO);
		rdma_ack_cm_event(ev); return;
	}
	rp_keep_pd(s, ev);
	id = ev->id;
	rp_describe(s, id);
	if (reject) {
		if (rdma_reject(id, len ? pd : NULL, len)) rp_fail(s, "rdma_reject", errno);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		return;
	}
	if ((rc = rp_make_qp(id))) {
		rp_fail(s, "rdma_create_qp", rc);
		rdma_reject(id, NULL, 0);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		return;
	}
	rp_conn_param(&cp, pd, len);
	if (rdma_accept(id, &cp)) {
		rp_fail(s, "rdma_accept", errno);
		rdma_ack_cm_event(ev);
		rp_teardown(id);
		return;
	}
	rdma_ack_cm_event(ev);
	if ((rc = rp_wait(l->ch, ms, &ev))) { rp_fail(s, "waiting for ESTABLISHED", rc); rp_teardown(id); return; }
	s->event = ev->event;
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED) {
		rp_fail(s, rdma_event_str(ev->event), ev->status < 0 ? -ev->status : EPROTO);
		rdma_ack_cm_event(ev); rp_teardown(id); return;
	}
	rdma_ack_cm_event(ev);
	if (rp_disconnected(l->ch, ms, done) == 0)
		rdma_disconnect(id);
	rp_teardown(id);
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

func sideError(s *C.struct_rp_side) error {
	if s.err == 0 {
		return nil
	}
	return fmt.Errorf("%s: %v", C.GoString(&s.where[0]), syscall.Errno(s.err))
}

// report converts what C saw into a Report.
func sideReport(s *C.struct_rp_side, role Role, ev Event, sent []byte) Report {
	r := Report{
		Role:            role,
		Event:           ev,
		Device:          C.GoString(&s.device[0]),
		Local:           C.GoString(&s.local[0]),
		Peer:            C.GoString(&s.peer[0]),
		SentPrivateData: append(HexBytes{}, sent...),
	}
	if r.Device != "" {
		r.Transport = "ib"
		if s.iwarp != 0 {
			r.Transport = "iwarp"
		}
	}
	n := int(s.pd_len)
	r.ReceivedPrivateDataLen = n
	r.ReceivedPrivateData = C.GoBytes(unsafe.Pointer(&s.pd[0]), C.int(n))
	if ev == EventRejected {
		r.RejectStatus = int(s.status)
	}
	return r
}

func cBytes(b []byte) (unsafe.Pointer, C.int, func()) {
	if len(b) == 0 {
		return nil, 0, func() {}
	}
	p := C.CBytes(b)
	return p, C.int(len(b)), func() { C.free(p) }
}

// Dial runs the client side of one connection: it connects to cfg.Addr
// with cfg.PrivateData, reports the server's answer (established or
// rejected), then disconnects and reports that.
func Dial(cfg Config, report func(Report)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	src := C.CString(cfg.Source)
	defer C.free(unsafe.Pointer(src))
	dst := C.CString(cfg.Addr)
	defer C.free(unsafe.Pointer(dst))
	pd, n, free := cBytes(cfg.PrivateData)
	defer free()
	var msg []byte
	if cfg.SendNull {
		msg = NullCall
	}
	// The Send's buffer is registered with the device: C memory, which
	// the Go collector does not move.
	m, mn, freeMsg := cBytes(msg)
	defer freeMsg()
	var s, done C.struct_rp_side
	C.rp_dial(src, dst, C.int(cfg.Port), pd, n, C.int(cfg.timeout().Milliseconds()),
		C.int(cfg.Hold.Milliseconds()), m, mn, &s, &done)
	if err := sideError(&s); err != nil {
		return fmt.Errorf("client %s: %w", hostPort(cfg.Addr, cfg.Port), err)
	}
	if s.event == C.RDMA_CM_EVENT_REJECTED {
		report(sideReport(&s, RoleClient, EventRejected, cfg.PrivateData))
		return nil
	}
	r := sideReport(&s, RoleClient, EventEstablished, cfg.PrivateData)
	report(r)
	if err := sideError(&done); err != nil {
		return fmt.Errorf("client %s: disconnect: %w", hostPort(cfg.Addr, cfg.Port), err)
	}
	report(Report{Role: RoleClient, Event: EventDisconnected, Device: r.Device, Transport: r.Transport,
		Local: r.Local, Peer: r.Peer, SentPrivateData: HexBytes{}, ReceivedPrivateData: HexBytes{}})
	return nil
}

// Listener is a server listening on an rdma_cm port.
type Listener struct {
	l   C.struct_rp_listener
	cfg Config
}

// Listen binds and listens on cfg.Addr (any address when empty) and
// cfg.Port, and reports EventListening.
func Listen(cfg Config, report func(Report)) (*Listener, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addr := C.CString(cfg.Addr)
	defer C.free(unsafe.Pointer(addr))
	l := &Listener{cfg: cfg}
	var s C.struct_rp_side
	C.rp_listen(addr, C.int(cfg.Port), &l.l, &s)
	if err := sideError(&s); err != nil {
		C.rp_close(&l.l)
		if e := syscall.Errno(s.err); e == syscall.EADDRINUSE || e == syscall.EADDRNOTAVAIL {
			err = fmt.Errorf("%w (is another rdma_cm listener, nfsd for one, on port %d? or the address not on an RDMA device?)", err, cfg.Port)
		}
		return nil, fmt.Errorf("server %s: %w", hostPort(cfg.Addr, cfg.Port), err)
	}
	r := sideReport(&s, RoleServer, EventListening, nil)
	r.SentPrivateData, r.ReceivedPrivateData, r.Peer = HexBytes{}, HexBytes{}, ""
	report(r)
	return l, nil
}

// Accept handles the next connection request: it reports the client's
// private data, answers with pd (rdma_accept, or rdma_reject when reject
// is set) and, when accepted, waits for the client to disconnect.
func (l *Listener) Accept(pd []byte, reject bool, report func(Report)) error {
	if len(pd) > MaxPrivateData {
		return fmt.Errorf("private data: %d octets, librdmacm carries at most %d", len(pd), MaxPrivateData)
	}
	p, n, free := cBytes(pd)
	defer free()
	rej := C.int(0)
	if reject {
		rej = 1
	}
	var s, done C.struct_rp_side
	C.rp_accept_one(&l.l, p, n, rej, C.int(l.cfg.timeout().Milliseconds()), &s, &done)
	if err := sideError(&s); err != nil {
		return fmt.Errorf("server %s: %w", hostPort(l.cfg.Addr, l.cfg.Port), err)
	}
	ev := EventEstablished
	if reject {
		ev = EventRejected
	}
	// The private data is the connection request's.
	r := sideReport(&s, RoleServer, ev, pd)
	report(r)
	if reject {
		return nil
	}
	if err := sideError(&done); err != nil {
		return fmt.Errorf("server %s: %w", hostPort(l.cfg.Addr, l.cfg.Port), err)
	}
	report(Report{Role: RoleServer, Event: EventDisconnected, Device: r.Device, Transport: r.Transport,
		Local: r.Local, Peer: r.Peer, SentPrivateData: HexBytes{}, ReceivedPrivateData: HexBytes{}})
	return nil
}

// Close stops listening.
func (l *Listener) Close() error {
	C.rp_close(&l.l)
	return nil
}

// Built reports whether this build can open connections.
const Built = true
