//! Loopback ports for services that bind their own: found by binding and releasing
//! them, so another process may take one first. A start that loses that race fails and
//! is tried again on new ports; workerd is handed its socket instead ([`crate::workerd`]).
//! A service stopped and started again keeps its port in a [`ReservedPort`].

use std::net::{Ipv4Addr, SocketAddr, TcpListener};

use anyhow::Context as _;

/// `N` distinct ports that were free a moment ago.
pub fn free_ports<const N: usize>() -> anyhow::Result<[u16; N]> {
    let listeners = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut ports = [0; N];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener.local_addr()?.port();
    }
    Ok(ports)
}

/// A listening loopback socket, to hand to a process that accepts one.
pub fn held_socket() -> anyhow::Result<TcpListener> {
    Ok(TcpListener::bind("127.0.0.1:0")?)
}

/// A loopback port held by a socket that is bound but not listening: a connection to it
/// is refused, no other socket is handed it for port 0, and a process that binds it with
/// `SO_REUSEADDR` (as Python's `http.server` does) may still listen on it beside. A
/// service can so be stopped and started again on the same port without another taking
/// it meanwhile. Released when dropped.
pub struct ReservedPort {
    _socket: socket2::Socket,
    port: u16,
}

impl ReservedPort {
    pub fn new() -> anyhow::Result<ReservedPort> {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        socket.set_reuse_address(true)?;
        socket.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into())?;
        let bound = socket.local_addr()?.as_socket();
        let port = bound.context("a socket without an IP address")?.port();
        Ok(ReservedPort {
            _socket: socket,
            port,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}
