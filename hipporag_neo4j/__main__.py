from hipporag_neo4j.cli import main

main()
