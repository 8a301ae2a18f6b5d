# Read an IBDM topology file with the real IBDM library (ibutils' ibdmsh) and print what it
# built: one SYSTEM line a system, one LINK line a cabled front-panel port, with the node
# ports IBDM connected through the .ibnl system types (IBDM_IBNL_PATH), then the counts.
# Usage: ibdmsh ibdm_links.tcl TOPOLOGY
set fabric [new_IBFabric]
if {[IBFabric_parseTopology $fabric [lindex $argv 0]]} {
    puts "PARSE-FAILED"
    exit 1
}
set ports 0
set links 0
foreach pair [IBFabric_SystemByName_get $fabric] {
    set system [lindex $pair 1]
    puts "SYSTEM [IBSystem_name_get $system] [IBSystem_type_get $system]"
    foreach named [IBSystem_PortByName_get $system] {
        set plug [lindex $named 1]
        set far [IBSysPort_p_remoteSysPort_get $plug]
        if {$far == ""} continue
        set port [IBSysPort_p_nodePort_get $plug]
        set remote [IBPort_p_remotePort_get $port]
        puts "LINK [IBSystem_name_get $system] [IBSysPort_name_get $plug]\
 [IBSystem_name_get [IBSysPort_p_system_get $far]] [IBSysPort_name_get $far]\
 [IBNode_name_get [IBPort_p_node_get $port]]:[IBPort_num_get $port]\
 [IBNode_name_get [IBPort_p_node_get $remote]]:[IBPort_num_get $remote]"
    }
}
foreach pair [IBFabric_NodeByName_get $fabric] {
    set node [lindex $pair 1]
    for {set n 1} {$n <= [IBNode_numPorts_get $node]} {incr n} {
        set port [IBNode_getPort $node $n]
        if {$port == ""} continue
        incr ports
        if {[IBPort_p_remotePort_get $port] != ""} {incr links}
    }
}
puts "COUNTS systems=[llength [IBFabric_SystemByName_get $fabric]]\
 nodes=[llength [IBFabric_NodeByName_get $fabric]] ports=$ports links=[expr {$links / 2}]"
exit 0
