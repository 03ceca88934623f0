use super::*;

#[test]
fn debug_trees() {
    for line in ["echo $[1+1]", "a=1", "ls 2>/dev/null", "cat <(rm x)", "echo $"] {
        let tree = parse_tree(line).unwrap();
        println!("{line}: {}", tree.root_node().to_sexp());
        println!("{:?}", parse(line));
    }
}
