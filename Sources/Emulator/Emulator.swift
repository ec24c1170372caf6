// The emulator of Apple's Retention Messaging API: one core, an in-process transport and a
// loopback HTTP/1.1 server.
