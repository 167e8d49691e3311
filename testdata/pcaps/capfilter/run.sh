set -e
ip netns add cfa; ip netns add cfb
ip link add cfa0 netns cfa type veth peer name cfb0 netns cfb
for n in a b; do
  ip -n cf$n link set lo up; ip -n cf$n link set cf${n}0 up
done
ip -n cfa addr add 192.0.2.1/24 dev cfa0; ip -n cfb addr add 192.0.2.2/24 dev cfb0
ip -n cfa addr add 2001:db8:9::1/64 dev cfa0 nodad; ip -n cfb addr add 2001:db8:9::2/64 dev cfb0 nodad
sleep 1
ip netns exec cfa tcpdump -i cfa0 -s 0 -U -w mixed.ether.pcap 2>tcpd1.err & P1=$!
ip netns exec cfa tcpdump -i any -y LINUX_SLL -s 0 -U -w mixed.any-linux-sll.pcap 2>tcpd2.err & P2=$!
ip netns exec cfa tcpdump -i any -y LINUX_SLL2 -s 0 -U -w mixed.any-linux-sll2.pcap 2>tcpd3.err & P3=$!
ip netns exec cfb python3 listen.py & L=$!
sleep 2
ip netns exec cfa python3 traffic.py
ip netns exec cfa python3 tagged.py "$(dirname "$0")/.."
sleep 1
kill $P1 $P2 $P3; wait $P1 $P2 $P3 || true
kill $L 2>/dev/null || true
ip netns del cfa; ip netns del cfb
