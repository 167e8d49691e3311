# ---- connections (issue 7): conns and check on the bundled real capture -----

RXE_CAPTURE := testdata/pcaps/real/rxe-nfs42-rdma.pcap

DEMO_STEPS += demo-conns
.PHONY: demo-conns

demo-conns: ## demo: the kernel NFSv4.2 mount over soft-RoCE: packets, conns, the ladder, check
	@echo "== The Linux kernel's NFSv4.2 mount over soft-RoCE: the first packets"
	$(BIN) -r $(RXE_CAPTURE) -c 8
	@echo
	@echo "== Its connection: who connected to whom, what each side advertised, what was negotiated"
	$(BIN) conns $(RXE_CAPTURE)
	@echo
	@echo "== The ladder, with the findings where they arise (svcrdma's Send with Invalidate after R=0)"
	$(BIN) conns -V $(RXE_CAPTURE)
	@echo
	@echo "== The same in plain sentences: what was agreed, by whom, and what the traffic broke"
	$(BIN) explain $(RXE_CAPTURE)
	@echo
	@echo "== CI check against the pinned expectation (exit 0)"
	$(BIN) check --expect testdata/expect/rxe-nfs42-rdma.yaml $(RXE_CAPTURE)
	@echo
