// The reconciler: identities, remote state, plan, apply and status.
