//! Loopback ports for services that bind their own: found by binding and releasing
//! them, so another process may take one first. A start that loses that race fails and
//! is tried again on new ports; workerd is handed its socket instead ([`crate::workerd`]).

use std::net::TcpListener;

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
