import zipc

topic = zipc.Topic.open_or_create("tour", capacity_bytes=1 << 20, max_message_size=1024)
for msg in topic.subscribe(start="oldest"):  # waits for each message; ends once the topic is closed and read
    print(msg.decode(), flush=True)
zipc.Topic.remove("tour")
